"""MemoRepair as a LangGraph store: `MemoRepairStore`, a `langgraph.store.base.BaseStore`.

    from memorepair.integrations.langgraph import MemoRepairStore

    store = MemoRepairStore.open(ns="team-a")          # or MemoRepairStore(memory)
    graph = builder.compile(store=store)               # LangMem's tools work on it too

**Addresses.** One store is one MemoRepair namespace (repairs never cross namespaces, so
every LangGraph namespace whose items derive from one another lives in one). An item at
LangGraph namespace `(l1, ..., ln)` and key `k` is the artifact with uid `l1/.../ln/k`:
each label and the key are escaped reversibly (characters other than letters, digits,
`.`, `_` and `-` become `:HH` per UTF-8 byte), joined by `/`. The uid must fit
`model.UID_PATTERN`: at most 200 characters, and the first label must start with a
letter or digit. An artifact recorded elsewhere (CLI, MCP) under uid `a/b` appears as
key `b` in namespace `("a",)`.

**Values.** `put` takes a JSON object:

- `content`: a string is the artifact's content, what search ranks and what a repair
  rewrites; the other keys become its meta and come back beside it. A value without a
  string `content` is kept whole as JSON text (and its other keys as meta, for filters).
- `inputs` (reserved, not returned by `get`): its provenance, a list whose entries are a
  LangGraph address `[*namespace, key]`, a uid, or a pinned `uid@N` (the version read;
  `MemoRepairStore.pin` gives it). A bare key of the item's own namespace (`"t1"` for
  `[*namespace, "t1"]`) is taken as that item when no artifact has that uid; anything
  else unknown is refused with how to cite an item. An item with inputs is a `summary`
  (rebuilt from what remains when an input goes), one without a `record`.
- `memorepair` (reserved, not returned): `{"kind", "arch", "value", "repair_cost"}` to
  choose the artifact's kind and figures yourself.

A first `put` of a key records it; a `put` of a served key with a different value is an
`update` (a `correct` event: what was derived from the old version is withdrawn and
repaired before `put` returns), the same value again changes nothing; `put(..., None)`
(`delete`) is a `forget`: a delete event with its cascade, and its text erased. A `put`
after a `delete` re-creates the key as a new artifact: uids are never reused (the audit
trail keeps the deleted one, erased), so the key's next generation has uid `<uid>:g2`
(then `:g3`, ...), which reads back as the same namespace and key. `put(..., index=False)`
is honoured: the item is never embedded (meta `memorepair_embed: false`, kept by its
successors), so search never ranks it, by meaning or by words; `get` and searches without
a query return it, and a query search lists it unranked (score None) after the ranked
items when they are fewer than asked, as LangGraph's own stores do. A list of fields to
index is accepted; MemoRepair embeds the content.

**Who.** A store acts as one principal (`open(principal=...)`, or a `MemoryStore` from
`acting_as`), and every op passes MemoRepair's access check: `get`, `search` and
`list_namespaces` need the reader role, a `put` reader and writer (it reads the served
value first), a delete reader and curator. A read inside a graph run is recorded with the
run's `thread_id` as its session, so `audit exposure` names the thread that was served a
version a later event withdrew.

**Reads** return served versions only: `get` of a withdrawn or deleted key is `None`,
never the old value, and `search` never returns what a repair withdrew. `search(query=...)`
is MemoRepair's hybrid search within the namespace prefix; `filter` takes values and
`$eq`, `$ne`, `$gt`, `$gte`, `$lt`, `$lte` on value keys: string and boolean equalities on
fields named in MEMOREPAIR_SEARCH_META_FIELDS are applied in the search itself, every
condition is then checked exactly on the served hits, and the search widens until
`offset + limit` pass (past its deepest ranking, the remaining matches follow,
most recently updated first): a filter never returns fewer items than exist. Without a
query, items come most recently updated first. TTLs are not supported.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

from langgraph.store.base import (
    BaseStore,
    GetOp,
    Item,
    ListNamespacesOp,
    MatchCondition,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
)

from memorepair.api import (
    EMBED_META,
    MemoryStore,
    Principal,
    Served,
    canonical_json,
    embeds,
    open_store,
)
from memorepair.api import SEARCH_MAX_K as MAX_K
from memorepair.api import SearchMode as Mode
from memorepair.errors import InputError
from memorepair.model import PIN, UID_PATTERN, Artifact
from memorepair.settings import Settings

#: Value keys that are not content or meta: provenance and artifact options.
INPUTS = "inputs"
OPTIONS = "memorepair"
#: Meta key marking a value kept whole as JSON text in the content.
JSON_FORM = "langgraph_value"
_OPTION_KEYS = frozenset(("kind", "arch", "value", "repair_cost"))
_SAFE = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-")
_ESCAPE = re.compile(r":([0-9A-F]{2})")
#: A re-created key's generation at the end of its uid: `escape` never writes `:g`.
_GENERATION = re.compile(r"^(?P<key>.*):g(?P<n>[1-9][0-9]*)$")
#: Served items read per page when a search without query (or past its ranking) scans.
PAGE = 200
_OPERATORS = frozenset(("$eq", "$ne", "$gt", "$gte", "$lt", "$lte"))


# ---- addresses ---------------------------------------------------------------------------
def escape(label: str) -> str:
    return "".join(c if c in _SAFE else "".join(f":{b:02X}" for b in c.encode()) for c in label)


def unescape(part: str) -> str:
    """The label an escaped part stands for (a part written elsewhere stays as it is)."""
    if ":" not in part:
        return part
    raw = bytearray()
    pos = 0
    for match in _ESCAPE.finditer(part):
        raw += part[pos : match.start()].encode()
        raw.append(int(match[1], 16))
        pos = match.end()
    raw += part[pos:].encode()
    try:
        return raw.decode()
    except UnicodeDecodeError:
        return part


def uid_of(namespace: Sequence[str], key: str) -> str:
    """The uid of the item at (namespace, key); refused when it cannot be one."""
    uid = "/".join(escape(part) for part in (*namespace, key))
    if not re.fullmatch(UID_PATTERN, uid):
        raise InputError(
            f"LangGraph item {tuple(namespace)!r} / {key!r} maps to uid {uid[:80]!r}, which is "
            "not a valid uid: at most 200 characters once escaped, and the first namespace "
            "label must start with a letter or digit"
        )
    return uid


def address_of(uid: str) -> tuple[tuple[str, ...], str]:
    """(namespace, key) of an artifact's uid: the inverse of `uid_of` (and of
    `generation_uid`: every generation of a key has the key's address)."""
    *labels, key = uid.split("/")
    generation = _GENERATION.match(key)
    if generation is not None:
        key = generation["key"]
    return tuple(unescape(label) for label in labels), unescape(key)


def generation_uid(uid: str, generation: int) -> str:
    """The uid of a key's `generation`-th artifact (1: the key's own uid; a put after a
    delete makes the next one, since a deleted uid is never reused)."""
    if generation == 1:
        return uid
    again = f"{uid}:g{generation}"
    if not re.fullmatch(UID_PATTERN, again):
        raise InputError(
            f"LangGraph item {uid[:80]!r} cannot be re-created: its next uid {again[:80]!r} "
            "is over 200 characters; use a shorter key"
        )
    return again


def prefix_of(namespace_prefix: Sequence[str]) -> str:
    """The uid prefix of every item under a namespace prefix ('' for the whole store)."""
    return "".join(escape(label) + "/" for label in namespace_prefix)


# ---- values ----------------------------------------------------------------------------------
def artifact_of(
    uid: str,
    value: Mapping[str, Any],
    inputs: list[str] | None = None,
    *,
    index: bool = True,
) -> dict[str, Any]:
    """The artifact a put records (see the module doc for the value's keys); `inputs`
    as the store resolved them (default: `refs` of the value's), `index=False`: never
    embedded."""
    options = value.get(OPTIONS) or {}
    if not isinstance(options, Mapping) or set(options) - _OPTION_KEYS:
        raise InputError(f"item {uid!r}: '{OPTIONS}' takes only {sorted(_OPTION_KEYS)}")
    content, meta = content_of(value, index=index)
    inputs = refs(value.get(INPUTS)) if inputs is None else inputs
    item: dict[str, Any] = {
        "uid": uid,
        "kind": "summary" if inputs else "record",
        "content": content,
        "meta": meta,
        "inputs": inputs,
    }
    item.update(options)
    return item


def content_of(value: Mapping[str, Any], *, index: bool = True) -> tuple[str, dict[str, Any]]:
    """(content, meta) of a value: its string `content`, else the whole value as JSON;
    `index=False` marks the meta so that the engine never embeds it."""
    fields = {k: v for k, v in value.items() if k not in (INPUTS, OPTIONS)}
    marks = {} if index else {EMBED_META: False}
    text = fields.pop("content", None)
    if isinstance(text, str):
        return text, {**fields, **marks}
    whole = {k: v for k, v in value.items() if k not in (INPUTS, OPTIONS)}
    return canonical_json(whole), {**fields, JSON_FORM: "json", **marks}


def value_of(artifact: Artifact) -> dict[str, Any]:
    """The value `get` returns: built from the served content, which repairs rewrite."""
    meta = dict(artifact.meta)
    meta.pop(EMBED_META, None)
    if meta.pop(JSON_FORM, None) == "json":
        try:
            whole = json.loads(artifact.content)
        except ValueError:
            whole = None  # a repair rewrote it as text
        if isinstance(whole, dict):
            return whole
    return {**meta, "content": artifact.content}


Ref = str | tuple[str, ...]


def raw_refs(inputs: Any) -> list[Ref]:
    """Input references checked for form: a string (`uid`, `uid@N`, a bare key) or an
    address `[*namespace, key]` (as a tuple)."""
    if inputs is None:
        return []
    if not isinstance(inputs, list | tuple):
        raise InputError(f"'{INPUTS}' must be a list, got {type(inputs).__name__}")
    out: list[Ref] = []
    for ref in inputs:
        if isinstance(ref, str):
            out.append(ref)
        elif isinstance(ref, list | tuple) and ref and all(isinstance(p, str) for p in ref):
            out.append(tuple(ref))
        else:
            raise InputError(
                f"input {ref!r}: an address [*namespace, key], a uid or 'uid@N' "
                "(MemoRepairStore.pin gives the version you read)"
            )
    return out


def refs(
    inputs: Any, cite: Callable[[Sequence[str], str], str] = lambda ns, key: uid_of(ns, key)
) -> list[str]:
    """Input references as uids: strings as given, an address through `cite` (the store
    cites a key's current generation)."""
    return [ref if isinstance(ref, str) else cite(ref[:-1], ref[-1]) for ref in raw_refs(inputs)]


# ---- filters ---------------------------------------------------------------------------------
def matches(value: Mapping[str, Any], conditions: Mapping[str, Any] | None) -> bool:
    """LangGraph's filter semantics: equal values (nested objects, lists) or operators."""
    return all(_compare(value.get(k), want) for k, want in (conditions or {}).items())


def _compare(have: Any, want: Any) -> bool:
    if isinstance(want, Mapping):
        if any(str(k).startswith("$") for k in want):
            return all(_operator(have, op, arg) for op, arg in want.items())
        return isinstance(have, Mapping) and matches(have, want)
    if isinstance(want, list | tuple):
        return (
            isinstance(have, list | tuple)
            and len(have) == len(want)
            and all(_compare(h, w) for h, w in zip(have, want, strict=True))
        )
    return bool(have == want)


def _operator(have: Any, op: str, arg: Any) -> bool:
    if op not in _OPERATORS:
        raise InputError(f"filter operator {op!r} is not supported; use {sorted(_OPERATORS)}")
    if op == "$eq":
        return bool(have == arg)
    if op == "$ne":
        return bool(have != arg)
    try:
        left, right = _ordered(have, arg)
    except TypeError:
        return False  # a missing or incomparable field does not pass an order condition
    outcome = {"$gt": left > right, "$gte": left >= right, "$lt": left < right}
    return bool(outcome[op]) if op in outcome else bool(left <= right)


def _ordered(have: Any, arg: Any) -> tuple[Any, Any]:
    numbers = (int, float)
    if isinstance(have, numbers) and isinstance(arg, numbers) and not isinstance(have, bool):
        return float(have), float(arg)
    if isinstance(have, str) and isinstance(arg, str):
        return have, arg
    raise TypeError("not comparable")


def pushed_down(conditions: Mapping[str, Any] | None, searchable: Sequence[str]) -> dict[str, Any]:
    """The equalities search can apply itself: string or boolean values of fields the
    settings make searchable (numbers stay exact here: 5 and 5.0 index differently)."""
    out: dict[str, Any] = {}
    for key, want in (conditions or {}).items():
        if isinstance(want, Mapping) and set(want) == {"$eq"}:
            want = want["$eq"]
        if key in searchable and isinstance(want, str | bool):
            out[key] = want
    return out


# ---- the store -------------------------------------------------------------------------------
class MemoRepairStore(BaseStore):
    """LangGraph's long-term memory store over one MemoRepair namespace (module doc)."""

    def __init__(self, memory: MemoryStore, *, mode: Mode = "hybrid", owns: bool = False) -> None:
        self.memory = memory
        self.mode: Mode = mode
        self._owns = owns

    @classmethod
    def open(
        cls,
        ns: str | None = None,
        settings: Settings | None = None,
        *,
        mode: Mode = "hybrid",
        principal: Principal | str | None = None,
    ) -> MemoRepairStore:
        """A store over its own connection (closed by `close`), acting as `principal`
        (default: the local one, MEMOREPAIR_PRINCIPAL or the OS account)."""
        return cls(open_store(ns=ns, settings=settings, principal=principal), mode=mode, owns=True)

    def close(self) -> None:
        if self._owns:
            self.memory.close()

    def __enter__(self) -> MemoRepairStore:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def pin(self, namespace: Sequence[str], key: str) -> str | None:
        """`uid@N` of the item's served version, to cite as an input (None: not served)."""
        _, served = self._current(namespace, key)
        return served.artifact.pin if served else None

    def _current(self, namespace: Sequence[str], key: str) -> tuple[str, Served | None]:
        """The uid an address stands for now and its served version (None: not served).

        A deleted key's next generation (`generation_uid`) is looked up only past a
        deletion, so a key never deleted costs one read when served, two when absent."""
        base = uid_of(namespace, key)
        uid, generation = base, 1
        while True:
            served = self.memory.served([uid]).get(uid)
            if served is not None:
                return uid, served
            versions = self.memory.lineage(uid, missing_ok=True)
            if not versions or versions[-1]["visibility"] != "Removed":
                return uid, None
            generation += 1
            uid = generation_uid(base, generation)

    # ---- BaseStore ----
    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Each op in order (a put's repair completes before the next op reads)."""
        return [self._one(op) for op in ops]

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        return await asyncio.to_thread(self.batch, list(ops))

    def _one(self, op: Op) -> Result:
        if isinstance(op, GetOp):
            return self._get(op)
        if isinstance(op, SearchOp):
            return self._search(op)
        if isinstance(op, PutOp):
            self._put(op)
            return None
        if isinstance(op, ListNamespacesOp):
            return self._list_namespaces(op)
        raise InputError(f"unknown store operation {type(op).__name__}")

    def _get(self, op: GetOp) -> Item | None:
        _, served = self._current(op.namespace, op.key)
        if served is None:
            return None
        self.memory.record_use([served], session=thread_id())
        return _item(served)

    # ---- writes ----
    def _put(self, op: PutOp) -> None:
        uid, served = self._current(op.namespace, op.key)
        if op.value is None:
            self._delete(uid)
            return
        inputs = self._inputs(op.namespace, op.value)
        index = op.index is not False
        if served is None:
            self._record(uid, artifact_of(uid, op.value, inputs or [], index=index))
            return
        content, meta = content_of(op.value, index=index)
        current = served.artifact
        if (
            content == current.content
            and meta == current.meta
            and _same_inputs(inputs, current.inputs)
        ):
            return  # the same value again: no event, nothing to repair
        self.memory.update(uid, content=content, meta=meta, inputs=inputs, reason="LangGraph put")

    def _record(self, uid: str, artifact: dict[str, Any]) -> None:
        versions = self.memory.lineage(uid, missing_ok=True)
        if versions:
            raise InputError(
                f"item {uid!r} is withdrawn by a repair ({versions[-1]['visibility']}) and "
                "not served until the repair publishes or `memorepair retry` repairs it; "
                "delete it first to write the key anew"
            )
        self.memory.record(artifact)

    def _inputs(self, namespace: Sequence[str], value: Mapping[str, Any]) -> list[str] | None:
        """A put's inputs as uids (None: the value names none, so an update keeps them)."""
        if INPUTS not in value:
            return None
        cited = raw_refs(value.get(INPUTS))
        return [self._cite(namespace, ref) for ref in cited]

    def _cite(self, namespace: Sequence[str], ref: Ref) -> str:
        """One input as a uid: an address as its key's current generation; a string as
        the uid it names, else as a key of the putting item's own namespace."""
        if not isinstance(ref, str):
            return self._current(ref[:-1], ref[-1])[0]
        pinned = PIN.match(ref)
        uid, pin = (pinned["uid"], pinned["version"]) if pinned else (ref, None)
        if self.memory.lineage(uid, missing_ok=True):
            return ref
        local = self._local(namespace, uid)
        if local is not None:
            return f"{local}@{pin}" if pin else local
        address = [*namespace, uid]
        raise InputError(
            f"input {ref!r}: no artifact has uid {uid!r} and namespace {tuple(namespace)!r} "
            f"has no key {uid!r}; cite an item by its address, [*namespace, key] (e.g. "
            f"{address!r}), or pin the version you read with store.pin(namespace, key)"
        )

    def _local(self, namespace: Sequence[str], key: str) -> str | None:
        """The uid of `key` in `namespace` if such an item was ever written."""
        try:
            uid, served = self._current(namespace, key)
        except InputError:  # not a key that maps to a uid
            return None
        if served is not None or self.memory.lineage(uid, missing_ok=True):
            return uid
        return None

    def _delete(self, uid: str) -> None:
        versions = self.memory.lineage(uid, missing_ok=True)
        if not versions or versions[-1]["visibility"] == "Removed":
            return  # nothing there (LangGraph's delete of a missing key is a no-op)
        self.memory.forget([uid], reason="LangGraph delete")

    # ---- reads ----
    def _search(self, op: SearchOp) -> list[SearchItem]:
        wanted = op.offset + op.limit
        if op.limit < 1 or op.offset < 0:
            return []
        prefix = prefix_of(op.namespace_prefix)
        if op.query:
            found = self._ranked(op.query, prefix, op.filter, wanted)
        else:
            found = list(self._scan(prefix, op.filter, set(), wanted))
        page = found[op.offset : wanted]
        self.memory.record_use([served for served, _ in page], session=thread_id())
        return [_search_item(served, score) for served, score in page]

    def _ranked(
        self, query: str, prefix: str, conditions: dict[str, Any] | None, wanted: int
    ) -> list[tuple[Served, float | None]]:
        """Hybrid search widened until `wanted` hits pass the filter; past the deepest
        ranking, the remaining matches follow unranked (never fewer than exist)."""
        meta = pushed_down(conditions, self.memory.settings.search_meta_fields)
        k = min(MAX_K, max(2 * wanted, 10))
        while True:
            hits = self.memory.search(
                query,
                k,
                meta=meta or None,
                uid_prefix=prefix or None,
                mode=self.mode,
                record_use=False,
            )
            served = self.memory.served([hit.uid for hit in hits])
            passed: list[tuple[Served, float | None]] = [
                (served[hit.uid], hit.score)
                for hit in hits
                if hit.uid in served
                and embeds(served[hit.uid].artifact.meta)  # index=False: never ranked
                and matches(value_of(served[hit.uid].artifact), conditions)
            ]
            if len(passed) >= wanted:
                return passed
            if len(hits) < k:  # the ranking is whole: items not indexed follow, unranked
                rest = wanted - len(passed)
                return passed + list(self._scan(prefix, conditions, set(), rest, _unindexed))
            if k >= MAX_K:
                seen = {hit.uid for hit in hits}
                return passed + list(self._scan(prefix, conditions, seen, wanted - len(passed)))
            k = min(MAX_K, 4 * k)

    def _scan(
        self,
        prefix: str,
        conditions: dict[str, Any] | None,
        seen: set[str],
        wanted: int,
        keep: Callable[[Artifact], bool] = lambda artifact: True,
    ) -> Iterator[tuple[Served, float | None]]:
        """Served items under `prefix` passing the filter (and `keep`), most recently
        updated first."""
        skip = 0
        while wanted > 0:
            page = self.memory.list_served(uid_prefix=prefix, skip=skip, limit=PAGE)
            for served in page:
                if (
                    served.artifact.uid not in seen
                    and keep(served.artifact)
                    and matches(value_of(served.artifact), conditions)
                ):
                    wanted -= 1
                    yield served, None
                    if wanted == 0:
                        return
            if len(page) < PAGE:
                return
            skip += PAGE

    def _list_namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        """Namespaces holding served items, filtered, truncated to max_depth, sorted."""
        fixed = _fixed_prefix(op.match_conditions)
        paths = self.memory.served_paths(prefix_of(fixed))
        found: set[tuple[str, ...]] = set()
        for path in paths:
            namespace = tuple(unescape(label) for label in path)
            if all(_namespace_matches(c, namespace) for c in op.match_conditions or ()):
                found.add(namespace[: op.max_depth] if op.max_depth else namespace)
        return sorted(found)[op.offset : op.offset + op.limit]


def _unindexed(artifact: Artifact) -> bool:
    """Put with `index=False`: search lists it only after what it ranks."""
    return not embeds(artifact.meta)


def thread_id() -> str | None:
    """The `thread_id` of the LangGraph run this op belongs to (its config), if any."""
    try:
        from langgraph.config import get_config

        config = get_config()
    except (ImportError, RuntimeError):  # outside a run, or langgraph-checkpoint alone
        return None
    value = (config.get("configurable") or {}).get("thread_id")
    return None if value is None else str(value)


def _fixed_prefix(conditions: Sequence[MatchCondition] | None) -> tuple[str, ...]:
    """The labels every match must start with (a prefix condition up to its first '*')."""
    for condition in conditions or ():
        if condition.match_type == "prefix":
            labels: list[str] = []
            for label in condition.path:
                if label == "*":
                    break
                labels.append(label)
            return tuple(labels)
    return ()


def _namespace_matches(condition: MatchCondition, namespace: tuple[str, ...]) -> bool:
    path = tuple(condition.path)
    if len(namespace) < len(path):
        return False
    pairs = (
        zip(namespace, path, strict=False)
        if condition.match_type == "prefix"
        else zip(reversed(namespace), reversed(path), strict=False)
    )
    return all(want in ("*", have) for have, want in pairs)


def _item(served: Served) -> Item:
    namespace, key = address_of(served.artifact.uid)
    return Item(
        namespace=namespace,
        key=key,
        value=value_of(served.artifact),
        created_at=served.created_at,
        updated_at=served.updated_at,
    )


def _search_item(served: Served, score: float | None = None) -> SearchItem:
    namespace, key = address_of(served.artifact.uid)
    return SearchItem(
        namespace=namespace,
        key=key,
        value=value_of(served.artifact),
        created_at=served.created_at,
        updated_at=served.updated_at,
        score=score,
    )


def _same_inputs(given: list[str] | None, current: Sequence[str]) -> bool:
    """Whether a put's inputs leave the provenance as it is (pins compared by uid)."""
    if given is None:
        return True
    return [m["uid"] if (m := PIN.match(ref)) else ref for ref in given] == list(current)
