"""Fingerprints of erased text: how a copy is found without keeping the text itself.

An erasing event records hashes of every 8-word phrase of the erased text (of the whole
text when shorter, from 3 words) and of every identifier-like token (a word of 5+
characters holding a digit and a letter: booking references, passport numbers). A string
holds a copy when one of its own phrases or tokens hashes to a recorded fingerprint.

Pure functions only: the erasure step records and scans with them, validation refuses a
successor that carries one, and `neo4j purge` looks for them in the server's files.
Fingerprints find copies, never paraphrases; what removes a paraphrase is the graph's
structure (everything derived from an erased root is rebuilt or redacted).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

PHRASE = 8
MIN_PHRASE = 3

_WORD = re.compile(r"\w+", re.UNICODE)
_TOKEN = re.compile(r"\S+")
#: A citation of a version (`[uid@v3]`) names an artifact, which keeps its uid and
#: lineage after an erasure: it is structure, not erased text.
_CITATION = re.compile(r"@v\d+$")


def digest(text: str) -> str:
    """A fingerprint's hash: the first 128 bits of SHA-256, as 32 hex digits (recorded
    fingerprints keep this length, so old erasure records still match)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


def sha256_hex(text: str) -> str:
    """The whole SHA-256 of a text, 64 hex digits (what an erasure record keeps of each
    erased version)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def strings_in(value: Any) -> Iterator[str]:
    """Every string in a JSON value (keys and values), depth first."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for key, item in value.items():
            yield str(key)
            yield from strings_in(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from strings_in(item)


def _phrases(words: list[str], size: int) -> Iterator[str]:
    for start in range(len(words) - size + 1):
        yield " ".join(words[start : start + size])


def _identifiers(text: str) -> Iterator[str]:
    for token in _TOKEN.findall(text):
        token = token.strip(".,;:!?()[]{}\"'").lower()
        if _CITATION.search(token):
            continue
        if len(token) >= 5 and any(c.isdigit() for c in token) and any(c.isalpha() for c in token):
            yield token


def fingerprints(texts: Iterable[str]) -> list[str]:
    """The fingerprints of texts to erase: `<n>:<hash>` of phrases, `id:<hash>` of tokens."""
    found: set[str] = set()
    for text in texts:
        words = [w.lower() for w in _WORD.findall(text)]
        size = min(PHRASE, len(words))
        if size >= MIN_PHRASE:
            found.update(f"{size}:{digest(p)}" for p in _phrases(words, size))
        found.update(f"id:{digest(t)}" for t in _identifiers(text))
    return sorted(found)


@dataclass(frozen=True)
class Matcher:
    """Finds erased text in any string by its fingerprints (never by the text itself).

    `hits` is what an erasure's scan runs on every string property of a namespace, so it
    compares raw digests (no hex, no formatting) and remembers the strings it has judged
    (kinds, labels and meta terms repeat on every node)."""

    prints: frozenset[str]
    sizes: frozenset[int]
    #: Raw digest -> fingerprint, for identifiers and for phrases.
    _ids: Mapping[bytes, str] = field(default_factory=dict, compare=False, repr=False)
    _phrases: Mapping[bytes, str] = field(default_factory=dict, compare=False, repr=False)
    _judged: dict[str, bool] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def of(cls, prints: Iterable[str]) -> Matcher:
        found = frozenset(prints)
        sizes = frozenset(int(p.split(":")[0]) for p in found if not p.startswith("id:"))
        ids = {_raw(p): p for p in found if p.startswith("id:")}
        phrases = {_raw(p): p for p in found if not p.startswith("id:")}
        return cls(found, sizes, ids, phrases)

    @property
    def phrases_only(self) -> Matcher:
        """The phrase fingerprints alone (identifiers left out)."""
        return Matcher.of(self._phrases.values())

    @property
    def identifiers_only(self) -> Matcher:
        """The identifier fingerprints alone (phrases left out)."""
        return Matcher.of(self._ids.values())

    def __bool__(self) -> bool:
        return bool(self.prints)

    def hits(self, value: Any) -> bool:
        """Whether a value (a string, or any JSON value) quotes the erased text."""
        return any(self._hit(text) for text in strings_in(value))

    def found_in(self, value: Any) -> set[str]:
        """The fingerprints a value carries (a subset of `prints`)."""
        found: set[str] = set()
        for text in strings_in(value):
            found.update(self._carried(text))
        return found

    def without(self, texts: Iterable[str]) -> Matcher:
        """These fingerprints less those `texts` carry: what a correction's replacement
        still says is the new truth, not erased text."""
        kept = set(self.prints)
        for text in texts:
            kept.difference_update(self._carried(text))
        return Matcher.of(kept)

    def _hit(self, text: str) -> bool:
        known = self._judged.get(text)
        if known is None:
            known = self._judged[text] = self._quotes(text)
            if len(self._judged) > _JUDGED_MAX:
                self._judged.clear()
        return known

    def _quotes(self, text: str) -> bool:
        if self._ids and any(_digest_raw(t) in self._ids for t in _identifiers(text)):
            return True
        if not self._phrases:
            return False
        words = [w.lower() for w in _WORD.findall(text)]  # as `fingerprints` splits them
        return any(
            _digest_raw(" ".join(words[start : start + size])) in self._phrases
            for size in self.sizes
            for start in range(len(words) - size + 1)
        )

    def _carried(self, text: str) -> Iterator[str]:
        if self._ids:
            for token in _identifiers(text):
                if (fingerprint := self._ids.get(_digest_raw(token))) is not None:
                    yield fingerprint
        if not self._phrases:
            return
        words = [w.lower() for w in _WORD.findall(text)]
        for size in self.sizes:
            for phrase in _phrases(words, size):
                found = self._phrases.get(_digest_raw(phrase))
                if found is not None and found.startswith(f"{size}:"):
                    yield found


#: Distinct strings a matcher remembers its verdict on (bounded memory on large scans).
_JUDGED_MAX = 100_000


def _raw(fingerprint: str) -> bytes:
    return bytes.fromhex(fingerprint.split(":", 1)[1])


def _digest_raw(text: str) -> bytes:
    """`digest` as the 16 bytes it encodes."""
    return hashlib.sha256(text.encode("utf-8")).digest()[:16]
