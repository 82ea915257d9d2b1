"""Writing fresh artifacts: bulk imports and the single `record` of an agent.

Every artifact is written together with its influence edges, in input-first order and in
batches. Each batch first locks the current versions of its inputs, then reads whether
they are served: an artifact derived from withdrawn or removed support is written
withdrawn and joins the audit of the event holding that support. Because the barrier
takes the same locks, a writer either commits before the barrier (and the barrier's
fixpoint reach then sees its edges) or sees the withdrawal; it never publishes a live
artifact on stale support.

Visibility is decided inside the write's own transaction, always. The embedding of each
artifact's content is not: by default (MEMOREPAIR_RECORD_EMBEDDING=deferred) a background
writer (`embedding.EmbeddingBacklog`) adds it just after the commit, off the agent's
latency path, so a fresh artifact is served and found by words at once and by meaning
once its embedding lands; `inline` computes it before the transaction and writes it in.
`record` takes one statement in the common case (`recording/record_artifact`); `record_many`
and imports write UNWIND batches, two in flight.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Literal

from memorepair import embedding, queries
from memorepair.codec import stored_json
from memorepair.errors import InputError, MemoRepairError, UnknownArtifactError, some
from memorepair.interchange import Memory, Skeleton, index_memory, order_skeleton, with_inputs
from memorepair.model import ArtifactIn, artifact_key, version_id
from memorepair.store import HEADS, LOCK_HEADS, Store, Tx

#: What recording does with an artifact whose pinned input is no longer served.
OnStale = Literal["withdraw", "refuse"]
#: Content bytes one import batch reads and sends at most (besides MEMOREPAIR_BATCH_SIZE).
IMPORT_BATCH_BYTES = 16 << 20

CREATE_ARTIFACTS = queries.named("recording/create_artifacts")
CREATE_LIVE_ARTIFACTS = queries.named("recording/create_live_artifacts")
CREATE_RELATED = queries.named("recording/create_related")
DELETE_VERSIONS = queries.named("recording/delete_versions")
RECORD_ARTIFACT = queries.named("recording/record_artifact")
STALE_HOLDERS = queries.named("recording/stale_holders")
CLEAR_NAMESPACE = queries.named("recording/clear_namespace")


@dataclass
class ImportReport:
    written: int = 0
    live: int = 0
    withdrawn_late: list[str] = field(default_factory=list)
    related: int = 0

    def add(self, rows: Sequence[Mapping[str, Any]]) -> None:
        """Count one committed batch: written, served, and withdrawn at once (late)."""
        self.written += len(rows)
        self.live += sum(1 for row in rows if row["live"])
        self.withdrawn_late += [row["uid"] for row in rows if not row["live"]]

    def as_dict(self) -> dict[str, Any]:
        return {
            "written": self.written,
            "live": self.live,
            "withdrawn_late": self.withdrawn_late,
            "related_edges": self.related,
        }


@dataclass(frozen=True)
class Writes:
    """What recording writes with, built by the API: the search fields of each version
    (`indexing`), the content cap (MEMOREPAIR_MAX_CONTENT_BYTES), the backlog that embeds
    just after each commit (None: embedded inside it, or not at all), and the principal
    recording (`by`, kept on every version it writes)."""

    indexing: embedding.Indexing
    max_content_bytes: int
    backlog: embedding.EmbeddingBacklog | None = None
    by: str | None = None


def clear(store: Store, ns: str) -> None:
    """Delete every artifact and event of a namespace (tests, benchmarks, demos), in
    batches of the server's own (`CALL { } IN TRANSACTIONS`)."""
    store.autocommit(CLEAR_NAMESPACE, ns=ns)


def import_memory(
    store: Store,
    ns: str,
    memory: Memory,
    *,
    writes: Writes,
    on_stale: OnStale = "withdraw",
    progress: Callable[[int, int], None] = lambda done, total: None,
) -> ImportReport:
    """Import artifacts and edges already in memory (the API's `import_items` and
    `record_many`)."""
    for artifact in memory.artifacts:
        _check_size(writes.max_content_bytes, artifact, memory.lines.get(artifact.uid))
    by_uid = {a.uid: a for a in memory.artifacts}
    load = lambda uids: [by_uid[u] for u in uids]  # noqa: E731
    return _import(store, ns, Skeleton.of(memory), load, progress, on_stale, writes)


def import_file(
    store: Store,
    ns: str,
    path: Path,
    *,
    writes: Writes,
    on_stale: OnStale = "withdraw",
    progress: Callable[[int, int], None] = lambda done, total: None,
) -> ImportReport:
    """Import a memory file, streaming: validated whole first, contents read per batch."""
    index = index_memory(path, writes.max_content_bytes)
    return _import(store, ns, index.skeleton, index.load, progress, on_stale, writes)


def _check_size(limit: int, artifact: ArtifactIn, line: int | None) -> None:
    size = len(artifact.content.encode("utf-8"))
    if size > limit:
        raise InputError(
            f"line {line or '?'}: artifact {artifact.uid!r} content is {size} bytes, over "
            f"MEMOREPAIR_MAX_CONTENT_BYTES={limit}"
        )


def _import(
    store: Store,
    ns: str,
    skeleton: Skeleton,
    load: Callable[[Sequence[str]], list[ArtifactIn]],
    progress: Callable[[int, int], None],
    on_stale: OnStale,
    writes: Writes,
) -> ImportReport:
    """Refuse existing uids and bad graphs, then write input-first in batches (all or none).

    With a `backlog`, each batch commits without embeddings, which the backlog writes
    after it (behind the next batches); without, they are computed before each batch.
    """
    store.require_schema()
    order, inputs = order_skeleton(skeleton, _known_inputs(store, ns, skeleton))
    report = ImportReport()
    written: list[str] = []
    write = _batch_writer(store, ns, on_stale, writes)
    batches = list(_batches(order, skeleton.sizes, store.batch_size))
    backlog = writes.backlog
    hold: AbstractContextManager[None] = backlog.held() if backlog else nullcontext()
    try:
        with hold:
            loaded = ([with_inputs(a, inputs[a.uid]) for a in load(uids)] for uids in batches)
            for rows in _overlapped(batches, loaded, inputs, write, written):
                report.add(rows)
                progress(report.written, len(order))
            report.related = _write_related(store, ns, skeleton)
    except MemoRepairError:
        for vids in store.batched(written):  # nothing half-imported: take back what committed
            store.write(DELETE_VERSIONS, vids=vids)
        raise
    return report


def _known_inputs(store: Store, ns: str, skeleton: Skeleton) -> set[str]:
    """The referenced uids that exist and may be derived from; an artifact of the import
    that exists already is refused (artifacts are immutable)."""
    keys = [artifact_key(ns, u) for u in sorted(skeleton.referenced())]
    heads = {row["uid"]: row for row in store.read(HEADS, keys=keys)}
    for uid in sorted(set(skeleton.inputs) & set(heads)):
        head = heads[uid]
        state = "deleted" if head["removed"] else f"at version {head['version']}"
        raise InputError(
            f"line {skeleton.lines.get(uid, '?')}: artifact {uid!r} already exists ({state}); "
            "artifacts are immutable: change one with a 'correct' event, or use a new uid"
        )
    # a deleted input is unknown, unless pinned: then the artifact is stale (see `record`)
    return {uid for uid, row in heads.items() if not row["removed"] or uid in skeleton.pinned}


def _batch_writer(
    store: Store, ns: str, on_stale: OnStale, writes: Writes
) -> Callable[[list[ArtifactIn]], list[dict[str, Any]]]:
    """Writes one batch in its own transaction; with a backlog, its served versions'
    embeddings are queued for just after the commit, else computed before it."""
    space, backlog = writes.indexing.space, writes.backlog

    def write(batch: list[ArtifactIn]) -> list[dict[str, Any]]:
        search = embedding.search_fields(writes.indexing, batch, embed=backlog is None)
        rows = store.transaction(
            partial(
                _write_batch,
                ns=ns,
                batch=batch,
                on_stale=on_stale,
                search=search,
                space=space,
                by=writes.by,
            )
        )
        if backlog is not None:
            content = {a.uid: a.content for a in batch if embedding.embeds(a.meta)}
            live = [r for r in rows if r["live"] and r["uid"] in content]
            backlog.add([embedding.Pending(ns, r["vid"], content[r["uid"]]) for r in live])
        return rows

    return write


def _overlapped(
    batches: list[list[str]],
    loaded: Iterator[list[ArtifactIn]],
    inputs: Mapping[str, Sequence[str]],
    write: Callable[[list[ArtifactIn]], list[dict[str, Any]]],
    written: list[str],
) -> Iterator[list[dict[str, Any]]]:
    """Each batch's rows, in order, with two batches in flight: a commit is single-threaded
    on the server, so the second core writes the next batch meanwhile. A batch that
    derives from an artifact of a batch still in flight waits for it (input-first order
    holds across commits). Contents are loaded here, on the caller's thread. Every
    committed batch's vids land in `written`, also when a later batch fails, so the
    caller can take them all back."""
    batch_of = {uid: k for k, uids in enumerate(batches) for uid in uids}
    pending: deque[tuple[int, Future[list[dict[str, Any]]]]] = deque()
    with ThreadPoolExecutor(max_workers=2, thread_name_prefix="memorepair-import") as pool:
        try:
            for k, (uids, batch) in enumerate(zip(batches, loaded, strict=True)):
                earlier = (batch_of.get(i, k) for u in uids for i in inputs[u])
                needs = max((j for j in earlier if j < k), default=-1)
                while pending and (len(pending) >= 2 or pending[0][0] <= needs):
                    yield _settled(pending.popleft()[1], written)
                pending.append((k, pool.submit(write, batch)))
            while pending:
                yield _settled(pending.popleft()[1], written)
        finally:  # after an error: let the others end, keep the vids of those that commit
            for _, future in pending:
                if future.exception() is None:
                    written += [row["vid"] for row in future.result()]


def _settled(future: Future[list[dict[str, Any]]], written: list[str]) -> list[dict[str, Any]]:
    rows = future.result()
    written += [row["vid"] for row in rows]
    return rows


def _batches(order: list[str], sizes: dict[str, int], count: int) -> Iterator[list[str]]:
    """`order` cut into batches of at most `count` artifacts and about IMPORT_BATCH_BYTES
    of content: a batch's contents are what an import holds in memory at once."""
    batch: list[str] = []
    held = 0
    for uid in order:
        if batch and (len(batch) >= count or held + sizes.get(uid, 0) > IMPORT_BATCH_BYTES):
            yield batch
            batch, held = [], 0
        batch.append(uid)
        held += sizes.get(uid, 0)
    if batch:
        yield batch


def _write_related(store: Store, ns: str, skeleton: Skeleton) -> int:
    pairs = [(e.src, e.dst) for e in skeleton.edges if e.rel == "RELATED"] + skeleton.related
    rows = [{"src": artifact_key(ns, a), "dst": artifact_key(ns, b)} for a, b in pairs]
    for batch in store.batched(rows):
        store.write(CREATE_RELATED, rows=batch)
    return len(rows)


def record(
    store: Store,
    ns: str,
    artifact: ArtifactIn,
    *,
    writes: Writes,
    on_stale: OnStale = "withdraw",
) -> dict[str, Any]:
    """Record one artifact derived by an agent: one transaction, in the common case one
    statement (`recording/record_artifact`), so its latency is close to a bare write's.

    Unpinned inputs must be current artifacts (their served versions are linked). A pinned
    input (`uid@N`) that is no longer served makes the artifact stale: it is recorded
    withdrawn, joined to the event that superseded or withdrew that version, or refused
    with `on_stale="refuse"`. With a backlog (`writes.backlog`) the embedding is written
    just after the commit (`embedding.EmbeddingBacklog`); without one, inside it.
    """
    store.require_schema()
    size = len(artifact.content.encode("utf-8"))
    if size > writes.max_content_bytes:
        raise InputError(
            f"artifact {artifact.uid!r} content is {size} bytes, over "
            f"MEMOREPAIR_MAX_CONTENT_BYTES={writes.max_content_bytes}"
        )
    backlog = writes.backlog
    search = embedding.search_fields(writes.indexing, [artifact], embed=backlog is None)
    space = writes.indexing.space
    work = partial(
        _record_one,
        ns=ns,
        artifact=artifact,
        search=search,
        space=space,
        on_stale=on_stale,
        by=writes.by,
    )
    result = store.transaction(work)
    if backlog is not None and result["live"] and embedding.embeds(artifact.meta):
        backlog.add([embedding.Pending(ns, result["vid"], artifact.content)])
    return result


def _record_one(
    tx: Tx,
    ns: str,
    artifact: ArtifactIn,
    search: Mapping[str, Mapping[str, Any]],
    space: embedding.Space | None,
    on_stale: OnStale,
    by: str | None = None,
) -> dict[str, Any]:
    """The common case in one statement; a stale pin takes the general path (same tx)."""
    row = {
        **_fresh_row(ns, artifact, by),
        "input_keys": [artifact_key(ns, u) for u in artifact.inputs],
        "input_pins": [artifact.pinned.get(u) for u in artifact.inputs],
        **search[artifact.uid],
    }
    model, dimension = (space.model, space.dimension) if space else (None, None)
    (found,) = tx.run(RECORD_ARTIFACT, ns=ns, row=row, model=model, dimension=dimension)
    if found["exists"]:
        state = " (deleted)" if found["deleted"] else ""
        raise InputError(
            f"artifact {artifact.uid!r} already exists{state}; change it with a 'correct' "
            "event or use a new uid"
        )
    if found["missing"]:
        missing = [artifact.inputs[pos] for pos in found["missing"]]
        raise UnknownArtifactError(
            f"artifact {artifact.uid!r}: {some(missing, 'input')} not current artifacts in "
            f"namespace {ns!r} (deleted, or never recorded)"
        )
    if space is not None:
        embedding.check_space(ns, space, found["model"], found["dimension"])
    if not found["created"]:
        return _write_batch(tx, ns, [artifact], on_stale, search, space, by)[0]
    return {
        "vid": row["vid"],
        "uid": artifact.uid,
        "live": found["live"],
        "held_by": found["held_by"],
    }


@dataclass(frozen=True)
class _Input:
    """The locked current version of an input: what a new artifact derives from."""

    version: int
    live: bool
    removed: bool
    held_by: str | None


def _write_batch(
    tx: Tx,
    ns: str,
    batch: Sequence[ArtifactIn],
    on_stale: OnStale,
    search: Mapping[str, Mapping[str, Any]],
    space: embedding.Space | None,
    by: str | None = None,
) -> list[dict[str, Any]]:
    """Lock the batch's inputs, decide each artifact's visibility, write them all."""
    state = _lock_inputs(tx, ns, batch)
    stale = _stale_holders(tx, ns, batch, state, on_stale)
    rows: list[dict[str, Any]] = []
    for artifact in batch:  # input-first order, so batch-internal inputs are decided already
        row = {**_row(ns, artifact, state, stale, by), **search[artifact.uid]}
        state[artifact.uid] = _Input(1, row["live"], False, row["held_by"])
        rows.append(row)
    embedding.claim_space(tx, ns, space)
    _create(tx, ns, rows)
    return [
        {"vid": r["vid"], "uid": r["uid"], "live": r["live"], "held_by": r["held_by"]} for r in rows
    ]


def _lock_inputs(tx: Tx, ns: str, batch: Sequence[ArtifactIn]) -> dict[str, _Input]:
    """The current version of each input from outside the batch, locked (as the barrier
    locks it: a writer commits before a barrier's reach or sees its withdrawal)."""
    in_batch = {a.uid for a in batch}
    outside = sorted({u for a in batch for u in a.inputs if u not in in_batch})
    locked = tx.run(LOCK_HEADS, keys=[artifact_key(ns, u) for u in outside])
    state = {
        row["uid"]: _Input(
            int(row["version"]), bool(row["live"]), bool(row["removed"]), row["held_by"]
        )
        for row in locked
    }
    lost = [u for u in outside if u not in state]
    if lost:
        raise UnknownArtifactError(f"{some(lost, 'input')} disappeared while recording; retry")
    return state


def _create(tx: Tx, ns: str, rows: list[dict[str, Any]]) -> None:
    """The rows as nodes: served ones without an embedding by the plain statement (no
    vector index update), first, since the others may derive from them (never the
    reverse)."""
    plain = [r for r in rows if r["live"] and r["embedding"] is None]
    other = [r for r in rows if not (r["live"] and r["embedding"] is None)]
    if plain:
        tx.run(CREATE_LIVE_ARTIFACTS, ns=ns, rows=plain)
    if other:
        tx.run(CREATE_ARTIFACTS, ns=ns, rows=other)


def _input(row: Mapping[str, Any]) -> _Input:
    return _Input(int(row["version"]), bool(row["live"]), bool(row["removed"]), row["held_by"])


def _is_stale(artifact: ArtifactIn, uid: str, current: _Input) -> bool:
    """A pinned input that is not the current version any more, or was deleted."""
    pinned = artifact.pinned.get(uid)
    return pinned is not None and (pinned != current.version or current.removed)


def _stale_holders(
    tx: Tx,
    ns: str,
    batch: Sequence[ArtifactIn],
    state: Mapping[str, _Input],
    on_stale: OnStale,
) -> dict[str, str]:
    """For every stale pinned input version (by vid), the event that superseded or
    withdrew it, which the new artifact joins; refused instead when `on_stale` says so."""
    in_batch = {a.uid for a in batch}
    stale = [
        version_id(ns, uid, version)
        for artifact in batch
        for uid, version in artifact.pinned.items()
        if _pin_is_stale(artifact, uid, version, state, in_batch, on_stale)
    ]
    if not stale:
        return {}
    holders = {row["vid"]: row["event"] for row in tx.run(STALE_HOLDERS, vids=sorted(stale))}
    unknown = sorted(v for v in stale if not holders.get(v))
    if unknown:
        raise InputError(f"{some(unknown, 'input')} not served and no event withdrew them")
    return holders


def _pin_is_stale(
    artifact: ArtifactIn,
    uid: str,
    version: int,
    state: Mapping[str, _Input],
    in_batch: set[str],
    on_stale: OnStale,
) -> bool:
    """Whether a pin names a version no longer served; a pin to a version that never
    existed, or any stale one with `on_stale="refuse"`, is an error."""
    current = _Input(1, True, False, None) if uid in in_batch else state[uid]
    if version > current.version or (uid in in_batch and version != 1):
        raise UnknownArtifactError(
            f"artifact {artifact.uid!r}: input {uid}@{version} does not exist "
            f"(the latest version of {uid!r} is {current.version})"
        )
    if uid in in_batch or not _is_stale(artifact, uid, current):
        return False
    if on_stale == "refuse":
        raise InputError(_stale_message(artifact, uid, version, current))
    return True


def _stale_message(artifact: ArtifactIn, uid: str, version: int, current: _Input) -> str:
    now = "deleted" if current.removed else f"the served version is {uid}@{current.version}"
    return (
        f"artifact {artifact.uid!r}: input {uid}@{version} is not served any more ({now}); "
        "re-read the input and record again (with on_stale='withdraw' the artifact is "
        "recorded withdrawn instead)"
    )


def _row(
    ns: str,
    artifact: ArtifactIn,
    state: Mapping[str, _Input],
    stale: Mapping[str, str],
    by: str | None = None,
) -> dict[str, Any]:
    """One new version: served only if every input it read is served now."""
    input_vids: list[str] = []
    holders: list[str | None] = []
    stale_from: str | None = None
    for uid in artifact.inputs:
        current = state[uid]
        if _is_stale(artifact, uid, current):
            vid = version_id(ns, uid, artifact.pinned[uid])
            stale_from = stale_from or stale[vid]
        else:
            vid = version_id(ns, uid, current.version)
            if not current.live:
                holders.append(current.held_by)
        input_vids.append(vid)
    live = stale_from is None and not holders
    return {
        **_fresh_row(ns, artifact, by),
        "input_vids": input_vids,
        "live": live,
        "held_by": stale_from or next((h for h in holders if h), None),
        "outcome": None if live else "stale_input" if stale_from else "late_arrival",
    }


def _fresh_row(ns: str, artifact: ArtifactIn, by: str | None = None) -> dict[str, Any]:
    """The properties of an artifact's first version, as the write queries take them
    (`by`: the principal recording it)."""
    return {
        "vid": version_id(ns, artifact.uid, 1),
        "key": artifact_key(ns, artifact.uid),
        "uid": artifact.uid,
        "version": 1,
        "kind": artifact.kind.value,
        "arch": artifact.arch.value if artifact.arch else None,
        "content": artifact.content,
        "value": artifact.value,
        "repair_cost": artifact.repair_cost,
        "recipe": stored_json(artifact.recipe.model_dump() if artifact.recipe else None),
        "meta": stored_json(artifact.meta),
        "inputs": list(artifact.inputs) or None,  # none stored: an empty list costs a write
        "by": by,
    }
