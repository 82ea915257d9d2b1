"""Small pieces shared by the built-in operators: canonical JSON, citations, text features.

Everything here is a pure function of its arguments: successors must come out byte-for-byte
the same when built twice from the same context, so nothing may depend on dict order,
``hash()`` randomisation or the clock.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from memorepair.codec import canonical_json
from memorepair.errors import MemoRepairError
from memorepair.interchange import loads
from memorepair.model import Interface

from .base import RepairContext, Support
from .sandbox import type_matches


class OperatorError(MemoRepairError):
    """An operator could not build a successor from the context it was given.

    The candidate fails (its artifact stays withdrawn); the message says which artifact
    and why, e.g. a recipe's function that the new interface no longer has.
    """


class NoSupport(OperatorError):
    """The retained support holds nothing this operator can build a successor from (a
    chain skill all of whose tool-call records were deleted): SPEC §4's ``remove`` mode,
    which only the operator can tell. The artifact is removed, not failed: no retry
    could bring it back."""


def parse_json(text: str) -> tuple[bool, Any]:
    """``(True, value)`` when ``text`` is JSON (without NaN/Infinity), else ``(False, text)``."""
    try:
        return True, loads(text)
    except ValueError:
        return False, text


def pick(value: Any, path: str | Sequence[str | int] | None) -> Any:
    """Follow a dotted key path (or a list of keys / list indices) into parsed JSON."""
    if path is None or path == "":
        return value
    keys: Sequence[str | int] = path.split(".") if isinstance(path, str) else path
    for key in keys:
        if isinstance(value, Mapping) and str(key) in value:
            value = value[str(key)]
        elif isinstance(value, list) and str(key).lstrip("-").isdigit():
            index = int(key)
            if not -len(value) <= index < len(value):
                raise OperatorError(f"index {key!r} is out of range (list of {len(value)})")
            value = value[index]
        else:
            raise OperatorError(f"key {key!r} is missing from the JSON value")
    return value


# -- text --------------------------------------------------------------------------------

_WS = re.compile(r"\s+")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s")
_WORD = re.compile(r"\w+", re.UNICODE)


def normalise_ws(text: str) -> str:
    return _WS.sub(" ", text).strip()


def first_sentence(text: str, limit: int = 200) -> str:
    """The first sentence of ``text`` (whitespace collapsed), cut at ``limit`` characters.

    The result is always a substring of ``normalise_ws(text)``: validation relies on that
    to check that an extractive line came from the item it cites.
    """
    flat = normalise_ws(text)
    head = _SENTENCE_END.split(flat, maxsplit=1)[0]
    return head[:limit].rstrip()


def words(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text)]


def stable_hash(token: str) -> int:
    """A 64-bit hash that is the same in every process (``hash()`` is salted per run)."""
    return int.from_bytes(hashlib.blake2b(token.encode("utf-8"), digest_size=8).digest(), "big")


def hashed_counts(text: str, dim: int) -> list[float]:
    """Signed hashed bag of words: token t adds +-1 at ``stable_hash(t) % dim``."""
    vec = [0.0] * dim
    for token in words(text):
        h = stable_hash(token)
        vec[h % dim] += 1.0 if (h >> 63) == 0 else -1.0
    return vec


# -- citations ---------------------------------------------------------------------------

CITATION = re.compile(r"\[(?P<uid>[^\s\[\]]+)@v(?P<version>\d+)\]$")


def citation(item: Support) -> str:
    return f"[{item.uid}@v{item.version}]"


def unknown_inputs(ctx: RepairContext, inputs: Iterable[str]) -> list[str]:
    """Inputs a successor claims that are not usable support (deleted, invalidated, unknown)."""
    allowed = {s.uid for s in ctx.support}
    return sorted({uid for uid in inputs if uid not in allowed})


# -- interfaces --------------------------------------------------------------------------


def migrate_call(
    interface: Interface, function: str, args: Mapping[str, Any]
) -> tuple[str, dict[str, Any]]:
    """Rewrite one call written for the old interface: function and parameter names
    through the migration's maps, and the values of parameters it retyped converted to
    their new type (``convert_value``) when they have the old type.

    Idempotent: a call already in the new form comes back unchanged. A value that did
    not fit the old type either is left alone, for the schema check to name.
    """
    names = interface.param_renames.get(function, {})
    retyped = interface.retypes.get(function, {})
    new_args: dict[str, Any] = {}
    for name, value in args.items():
        new_args[names.get(name, name)] = value
        old_type = retyped.get(name)
        target = interface.new_param(function, name) if old_type else None
        if old_type is not None and target is not None and type_matches(value, old_type):
            new_args[target[1]] = convert_value(value, target[2])
    return interface.renames.get(function, function), new_args


def convert_value(value: Any, declared: str) -> Any:
    """``value`` as the type ``declared`` when it has another type and a lossless
    conversion exists, else unchanged (the schema check then names the mismatch).

    Anything to ``string``: its canonical JSON (2 -> "2", true -> "true"), which a
    back-end reading the old type parses back. From a ``string``: the JSON value it
    spells, when that has the declared type ("2" -> 2 for an ``integer``). An integral
    float to ``integer``. A value whose type is only known at run time (``$step:``,
    ``$input:`` references) is a string that spells no JSON value, so it stays.
    """
    if type_matches(value, declared):
        return value
    if declared == "string":
        return canonical_json(value)
    if isinstance(value, str):
        ok, parsed = parse_json(value)
        return parsed if ok and type_matches(parsed, declared) else value
    if declared == "integer" and isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def schema_dict(interface: Interface) -> dict[str, dict[str, Any]]:
    return {name: spec.model_dump() for name, spec in interface.functions.items()}


# -- drawing on invalidated support --------------------------------------------------------

#: Phrase length (words) for the "no text from invalidated support" check.
SHINGLE = 4


def _ngrams(ws: Sequence[str], n: int) -> set[tuple[str, ...]]:
    return {tuple(ws[i : i + n]) for i in range(len(ws) - n + 1)}


class PhraseIndex:
    """Texts in which a word n-gram is looked up: each text kept as its words (lower
    case) joined by single spaces, so a gram is held exactly when ``" w1 ... wn "`` is a
    substring. Words never contain a space, so this is the n-gram test itself, without
    building every text's n-grams."""

    def __init__(self, texts: Iterable[tuple[str, str]]) -> None:
        self._texts = [(key, flat_words(text)) for key, text in texts]

    def holders(self, gram: tuple[str, ...]) -> list[str]:
        needle = f" {' '.join(gram)} "
        return [key for key, flat in self._texts if needle in flat]


#: Texts up to this many characters are split once per `shared_words` block, and at most
#: this many of them are kept (the block's cache starts again when it is full).
FLAT_CACHED_CHARS = 65_536
FLAT_CACHED_TEXTS = 512

_SHARED: ContextVar[dict[str, str] | None] = ContextVar("memorepair_flat_words", default=None)


@contextmanager
def shared_words() -> Iterator[None]:
    """Within the block (one repair event, or one preview), each support text is split
    into words once, however many successors are checked against it.

    One event checks many successors against the same support (an interface record
    feeds every call and cache of its tool, a task summary its tool's summary), and
    splitting the same text again for each took the largest part of an in-process
    successor's build and validation. The cache lives only as long as the block, so no
    support text (an erased one included) outlives the event in it. Nested blocks share
    the outer one's."""
    if _SHARED.get() is not None:
        yield
        return
    token = _SHARED.set({})
    try:
        yield
    finally:
        _SHARED.reset(token)


def flat_words(text: str) -> str:
    """``text``'s words (``words``) joined by single spaces, with a space at both ends;
    inside `shared_words`, computed once per text."""
    cache = _SHARED.get()
    if cache is None or len(text) > FLAT_CACHED_CHARS:
        return _flat(text)
    found = cache.get(text)
    if found is None:
        if len(cache) >= FLAT_CACHED_TEXTS:
            cache.clear()
        found = cache[text] = _flat(text)
    return found


def _flat(text: str) -> str:
    return f" {' '.join(words(text))} "


class Taint:
    """Finds phrases of a text that occur in invalidated support (its content or meta) but
    in no usable support item: what a successor may not draw on."""

    def __init__(self, ctx: RepairContext) -> None:
        self._bad = PhraseIndex((a.uid, _text_of(a.content, a.meta)) for a in ctx.invalidated)
        self._good = PhraseIndex((s.uid, _text_of(s.content, s.meta)) for s in ctx.support)
        self._active = bool(ctx.invalidated)

    def phrase(self, text: str) -> str | None:
        ws = words(text)
        if not ws or not self._active:
            return None
        for gram in sorted(_ngrams(ws, min(SHINGLE, len(ws)))):
            holders = self._bad.holders(gram)
            if holders and not self._good.holders(gram):
                return f"{' '.join(gram)!r} (from invalidated {holders[0]!r})"
        return None


def _text_of(content: str, meta: Mapping[str, Any]) -> str:
    """Content and meta as one text to take phrases from (meta as canonical JSON)."""
    return f"{content}\n{canonical_json(dict(meta))}" if meta else content
