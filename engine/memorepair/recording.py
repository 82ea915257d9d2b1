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
and imports write UNWIND batches: in one transaction up to MEMOREPAIR_IMPORT_TX_ITEMS
items, else staged (`importing.py`), two batches in flight.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Generator, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import AbstractContextManager, closing, nullcontext
from dataclasses import dataclass, field
from functools import cached_property, partial
from pathlib import Path
from typing import Any, Literal, TypeVar

from memorepair import embedding, faults, importing, queries, redaction
from memorepair.codec import stored_json
from memorepair.errors import InputError, MemoRepairError, UnknownArtifactError, some
from memorepair.graphs import collector_paused
from memorepair.interchange import Memory, Skeleton, index_memory, order_skeleton, with_inputs
from memorepair.model import ArtifactIn, artifact_key, version_id
from memorepair.store import HEADS, LOCK_HEADS, TX_BYTES, Store, Tx

T = TypeVar("T")

#: What recording does with an artifact whose pinned input is no longer served.
OnStale = Literal["withdraw", "refuse"]
#: Content bytes one import batch reads and sends at most (besides MEMOREPAIR_BATCH_SIZE).
IMPORT_BATCH_BYTES = 16 << 20

CREATE_ARTIFACTS = queries.named("recording/create_artifacts")
CREATE_LIVE_ARTIFACTS = queries.named("recording/create_live_artifacts")
CREATE_RELATED = queries.named("recording/create_related")
RECORD_ARTIFACT = queries.named("recording/record_artifact")
STALE_HOLDERS = queries.named("recording/stale_holders")
CLEAR_NAMESPACE = queries.named("recording/clear_namespace")


@dataclass
class ImportReport:
    written: int = 0
    live: int = 0
    withdrawn_late: list[str] = field(default_factory=list)
    related: int = 0
    #: Withdrawn items whose text was not stored: an input of theirs is erased (each with
    #: uid, input, event and reason; `redaction.py`).
    redacted: list[dict[str, str]] = field(default_factory=list)
    #: Items stored already, identical (a batch run again after a crash or a success).
    skipped: int = 0
    #: The import record of a batch written staged (None: it fit one transaction).
    import_id: str | None = None
    #: Staged versions of an interrupted run of the same input, discarded before this one.
    discarded: int = 0

    def add(self, rows: Sequence[Mapping[str, Any]]) -> None:
        """Count one committed batch: written, served, and withdrawn at once (late)."""
        self.written += len(rows)
        self.live += sum(1 for row in rows if row["live"])
        self.withdrawn_late += [row["uid"] for row in rows if not row["live"]]
        self.add_redacted(rows)

    def add_redacted(self, rows: Sequence[Mapping[str, Any]]) -> None:
        """The rows of a batch that were written redacted (staged ones too)."""
        self.redacted += [{"uid": r["uid"], **r["redacted"]} for r in rows if r.get("redacted")]

    def as_dict(self) -> dict[str, Any]:
        return {
            "written": self.written,
            "live": self.live,
            "withdrawn_late": self.withdrawn_late,
            "redacted": self.redacted,
            "related_edges": self.related,
            "skipped": self.skipped,
            "import": self.import_id,
            "discarded_interrupted": self.discarded,
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
    #: Where the crash tests' fault markers go (`faults.PAUSE_ENV`; None: no pauses).
    state_dir: Path | None = None
    #: Items a batch may hold to be written in one transaction (MEMOREPAIR_IMPORT_TX_ITEMS);
    #: a larger one is staged and published.
    tx_items: int = 50_000


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
    import_id: str | None = None,
    unit: str = "line",
) -> ImportReport:
    """Import artifacts and edges already in memory (the API's `import_items` and
    `record_many`; `unit` names a position in errors: "line" or "item")."""
    for artifact in memory.artifacts:
        _check_size(writes.max_content_bytes, artifact, memory.lines.get(artifact.uid))
    by_uid = {a.uid: a for a in memory.artifacts}
    load = lambda uids: [by_uid[u] for u in uids]  # noqa: E731
    digest = lambda: importing.items_digest([*memory.artifacts, *memory.edges])  # noqa: E731
    batch = _Batch(Skeleton.of(memory), load, digest, import_id, unit)
    return _import(store, ns, batch, progress, on_stale, writes)


def import_file(
    store: Store,
    ns: str,
    path: Path,
    *,
    writes: Writes,
    on_stale: OnStale = "withdraw",
    progress: Callable[[int, int], None] = lambda done, total: None,
    import_id: str | None = None,
) -> ImportReport:
    """Import a memory file, streaming: validated whole first, contents read per batch."""
    index = index_memory(path, writes.max_content_bytes)
    digest = lambda: importing.file_digest(path)  # noqa: E731
    batch = _Batch(index.skeleton, index.load, digest, import_id, "line")
    return _import(store, ns, batch, progress, on_stale, writes)


@dataclass(frozen=True)
class _Batch:
    """One batch to write: its graph, how to read its items, what identifies it."""

    skeleton: Skeleton
    load: Callable[[Sequence[str]], list[ArtifactIn]]
    digest: Callable[[], str]
    import_id: str | None
    unit: str

    @cached_property
    def digest_hex(self) -> str:
        return self.digest()

    @property
    def id(self) -> str:
        """The import's id: as given, else its input's digest (the same input, the same id)."""
        return self.import_id or self.digest_hex[:16]


def _check_size(limit: int, artifact: ArtifactIn, line: int | None) -> None:
    size = len(artifact.content.encode("utf-8"))
    if size > limit:
        raise InputError(
            f"line {line or '?'}: artifact {artifact.uid!r} content is {size} bytes, over "
            f"MEMOREPAIR_MAX_CONTENT_BYTES={limit}"
        )


@collector_paused()  # a fresh pause per call (a context manager used as a decorator)
def _import(
    store: Store,
    ns: str,
    batch: _Batch,
    progress: Callable[[int, int], None],
    on_stale: OnStale,
    writes: Writes,
) -> ImportReport:
    """Skip the items stored already (identical; a different one is refused), then write
    the rest input-first, all or none across crashes: in one transaction when they fit
    one (`writes.tx_items` items, `TX_BYTES` of content), in statements of a batch
    each, else staged under an import record and published in one transaction.

    With a `backlog`, versions commit without embeddings, which the backlog writes after
    them; without, they are computed before each batch. Python's cyclic collector is
    paused throughout: a full collection would walk every row built (`collector_paused`).
    """
    store.require_schema()
    order, inputs, skipped = _plan(store, ns, batch)
    report = ImportReport(skipped=len(skipped))
    sizes = batch.skeleton.sizes
    related = _related_rows(ns, batch.skeleton)
    backlog = writes.backlog
    hold: AbstractContextManager[None] = backlog.held() if backlog else nullcontext()
    with hold:
        if len(order) <= writes.tx_items and sum(sizes.get(u, 0) for u in order) <= TX_BYTES:
            items = [with_inputs(a, inputs[a.uid]) for a in batch.load(order)]
            write = _batch_writer(store, ns, on_stale, writes, related=related)
            report.add(write(items))
        else:
            batches = list(_batches(order, sizes, store.batch_size))
            _import_staged(store, ns, batch, batches, inputs, progress, on_stale, writes, report)
    report.related = len(related)
    progress(report.written + report.skipped, report.written + report.skipped)
    return report


def _import_staged(
    store: Store,
    ns: str,
    batch: _Batch,
    batches: list[list[str]],
    inputs: Mapping[str, list[str]],
    progress: Callable[[int, int], None],
    on_stale: OnStale,
    writes: Writes,
    report: ImportReport,
) -> None:
    """Stage every batch under an import record, then publish them in one transaction."""
    report.import_id = batch.id
    own = frozenset(uid for uids in batches for uid in uids)
    key, report.discarded = importing.begin(
        store, ns, batch.id, digest=batch.digest_hex, count=len(own)
    )
    pause = partial(_pause, writes.state_dir, report.import_id)
    write = _batch_writer(store, ns, on_stale, writes, stage=(key, own))
    staged = 0
    try:
        loaded = ([with_inputs(a, inputs[a.uid]) for a in batch.load(uids)] for uids in batches)
        for rows in _overlapped(batches, loaded, inputs, write, []):
            staged += len(rows)
            report.add_redacted(rows)
            progress(staged + report.skipped, len(own) + report.skipped)
            pause("importing")  # some staged, none served
        importing.stage_related(store, key, _related_rows(ns, batch.skeleton))
        importing.mark_written(store, key, staged)
        pause("imported")  # all staged, the publication not yet run
        published = importing.publish(store, key)
        report.written += published.count
        report.live += published.count - len(published.withdrawn)
        report.withdrawn_late += published.withdrawn
    except MemoRepairError as exc:
        importing.discard(store, key, status="failed", error=str(exc))
        raise


def _pause(state_dir: Path | None, import_id: str, point: str) -> None:
    if state_dir is not None:
        faults.pause_if_asked(state_dir, import_id, point)


def _plan(store: Store, ns: str, batch: _Batch) -> tuple[list[str], dict[str, list[str]], set[str]]:
    """The write order of the items not stored yet, each one's inputs (edge lines folded
    in), and the items skipped because their uid is stored already, identical."""
    skeleton = batch.skeleton
    keys = [artifact_key(ns, u) for u in sorted(skeleton.referenced())]
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="memorepair-plan") as pool:
        staging = pool.submit(importing.open_imports, store, ns)  # meanwhile: two reads
        heads = {row["uid"]: row for row in store.read(HEADS, keys=keys)}
        # a deleted input is unknown, unless pinned: then the artifact is stale (`record`)
        known = {u for u, row in heads.items() if not row["removed"] or u in skeleton.pinned}
        order, inputs = order_skeleton(skeleton, known)
        stored = [u for u in order if u in heads]
        if staging.result():  # their staged versions are no Head: look them all up
            stored = list(order)
    skipped = _identical(store, ns, batch, stored, inputs)
    return [u for u in order if u not in skipped], inputs, skipped


def _identical(
    store: Store, ns: str, batch: _Batch, uids: list[str], inputs: Mapping[str, list[str]]
) -> set[str]:
    """Which of `uids` are stored identical to the batch's item (skipped); refuses, naming
    them and how they differ, items stored different, deleted, or staged by another
    import."""
    first = importing.first_versions(store, [version_id(ns, u, 1) for u in uids])
    refused: list[str] = []
    skipped: set[str] = set()
    for uids_chunk in store.batched(sorted(first)):
        for artifact in batch.load(uids_chunk):
            stored = first[artifact.uid]
            where = f"{batch.unit} {batch.skeleton.lines.get(artifact.uid, '?')}"
            problem = _compare(ns, with_inputs(artifact, inputs[artifact.uid]), stored, batch)
            if problem is None:
                skipped.add(artifact.uid)
            elif problem:
                refused.append(f"{where}: artifact {artifact.uid!r} {problem}")
    if refused:
        more = f" (and {len(refused) - 3} more)" if len(refused) > 3 else ""
        raise InputError(
            "; ".join(refused[:3]) + more + "; artifacts are immutable: change one with a "
            "'correct' event, or use a new uid"
        )
    return skipped


def _compare(ns: str, artifact: ArtifactIn, stored: Mapping[str, Any], batch: _Batch) -> str | None:
    """None: stored identical; "": staged by an interrupted run of this same import (it
    is discarded and written again); else why the item is refused."""
    staged_by = stored.get("staged_by")
    if staged_by is not None:
        if staged_by == importing.import_key(ns, batch.id):
            return ""
        return (
            f"is staged by the unfinished import {staged_by.split('/', 1)[-1]!r}; finish or "
            "discard it first (`memorepair resume`)"
        )
    if stored.get("erased_by"):
        return f"already exists (deleted by event {stored['erased_by']!r})"
    pins = [
        version_id(ns, u, artifact.pinned[u]) if u in artifact.pinned else None
        for u in artifact.inputs
    ]
    fields = importing.differences(_fresh_row(ns, artifact), stored, pins)
    if not fields:
        return None
    return f"already exists and differs from the stored version 1 in {', '.join(fields)}"


def _batch_writer(
    store: Store,
    ns: str,
    on_stale: OnStale,
    writes: Writes,
    *,
    related: Sequence[Mapping[str, str]] = (),
    stage: tuple[str, frozenset[str]] | None = None,
) -> Callable[[list[ArtifactIn]], list[dict[str, Any]]]:
    """Writes one batch in its own transaction, with `related` edges, or staged under an
    import (`stage`: its key and uids); with a backlog, its versions' embeddings are
    queued for just after the commit, else computed before it."""
    space, backlog = writes.indexing.space, writes.backlog

    def write(batch: list[ArtifactIn]) -> list[dict[str, Any]]:
        search = embedding.search_fields(writes.indexing, batch, embed=backlog is None)
        if stage is None:
            parts = _parts(batch, store.batch_size)
            work = partial(_write_with_related, ns, batch, on_stale, search, space, related)
            rows = store.transaction(partial(work, by=writes.by, parts=parts))
        else:
            key, own = stage
            staged = partial(_stage_batch, ns=ns, batch=batch, on_stale=on_stale, search=search)
            rows = store.transaction(partial(staged, space=space, key=key, own=own, by=writes.by))
        if backlog is not None:
            content = {a.uid: a.content for a in batch if embedding.embeds(a.meta)}
            live = [r for r in rows if r["live"] and r["uid"] in content]
            backlog.add([embedding.Pending(ns, r["vid"], content[r["uid"]]) for r in live])
        return rows

    return write


def _write_with_related(
    ns: str,
    batch: Sequence[ArtifactIn],
    on_stale: OnStale,
    search: Mapping[str, Mapping[str, Any]],
    space: embedding.Space | None,
    related: Sequence[Mapping[str, str]],
    tx: Tx,
    by: str | None = None,
    parts: Sequence[int] = (),
) -> list[dict[str, Any]]:
    """A whole import that fits one transaction: its versions, written in `parts` (rows
    per statement), and its related edges."""
    rows = _write_batch(tx, ns, batch, on_stale, search, space, by, parts) if batch else []
    for start in range(0, len(related), 10_000):
        tx.run(CREATE_RELATED, rows=list(related[start : start + 10_000]))
    return rows


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


def _parts(batch: Sequence[ArtifactIn], count: int) -> list[int]:
    """How many of `batch`'s rows each statement writes: as `_batches` cuts an import."""
    sizes = {a.uid: len(a.content) for a in batch}
    return [len(uids) for uids in _batches([a.uid for a in batch], sizes, count)]


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


def _related_rows(ns: str, skeleton: Skeleton) -> list[dict[str, str]]:
    pairs = [(e.src, e.dst) for e in skeleton.edges if e.rel == "RELATED"] + skeleton.related
    return [{"src": artifact_key(ns, a), "dst": artifact_key(ns, b)} for a, b in pairs]


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
        "redacted": None,
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
    parts: Sequence[int] = (),
) -> list[dict[str, Any]]:
    """Lock the batch's inputs, decide each artifact's visibility, write them all; one
    derived from an erased (or erasing) version is written redacted or refused
    (`redaction.redact_late`).

    `parts` cuts the batch into statements (rows each; default one), in input-first
    order, redaction passed on across them; while the server writes one part, another
    thread builds the next parts' rows (`_rows_ahead`)."""
    state = _lock_inputs(tx, ns, batch)
    stale = _stale_holders(tx, ns, batch, state, on_stale)
    embedding.claim_space(tx, ns, space)

    def build(part: Sequence[ArtifactIn]) -> _Part:
        rows: list[dict[str, Any]] = []
        for artifact in part:  # input-first order, so earlier inputs are decided already
            row = {**_row(ns, artifact, state, stale, by), **search[artifact.uid]}
            state[artifact.uid] = _Input(1, row["live"], False, row["held_by"])
            rows.append(row)
        return _Part(rows, _sent(rows), _written(rows, {}))

    erased: dict[str, redaction.Erasing] = {}
    written: list[dict[str, Any]] = []
    refuse = on_stale == "refuse"
    # closed on an error too, so the rows thread stops at once
    with closing(_rows_ahead(build, batch, parts or [len(batch)])) as built:
        for part in built:
            rows = part.rows
            late = redaction.redact_late(tx, ns, rows, refuse=refuse, earlier=erased)
            if late:  # some rows were redacted: send and report them as they are now
                part = _Part(rows, _sent(rows), _written(rows, late))
            _create(tx, ns, rows, part.sent)
            redaction.mark(tx, rows, late)
            erased.update(late)
            written += part.written
    return written


@dataclass(frozen=True)
class _Part:
    """One statement's rows: as decided, as sent (`_sent`), as reported (`_written`)."""

    rows: list[dict[str, Any]]
    sent: list[dict[str, Any]]
    written: list[dict[str, Any]]


def _sent(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The rows without their null values: the statement reads a missing key as null, so
    they need not be sent and unpacked."""
    return [{k: v for k, v in r.items() if v is not None} for r in rows]


def _rows_ahead(
    build: Callable[[Sequence[ArtifactIn]], T],
    batch: Sequence[ArtifactIn],
    parts: Sequence[int],
) -> Generator[T, None, None]:
    """Each part's rows, in order; with several parts, built on one other thread (in
    order, so each part sees its inputs' decisions) while the caller writes the earlier
    ones: the server executes a statement and the client builds the next meanwhile."""
    cuts = [sum(parts[:k]) for k in range(len(parts) + 1)]
    slices = [batch[cuts[k] : cuts[k + 1]] for k in range(len(parts))]
    if len(slices) == 1:
        yield build(slices[0])
        return
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="memorepair-rows") as pool:
        built = [pool.submit(build, part) for part in slices]
        try:
            for future in built:
                yield future.result()
        finally:  # an error or a refusal: the parts not built yet are not needed
            for future in built:
                future.cancel()


def _stage_batch(
    tx: Tx,
    ns: str,
    batch: Sequence[ArtifactIn],
    on_stale: OnStale,
    search: Mapping[str, Mapping[str, Any]],
    space: embedding.Space | None,
    key: str,
    own: frozenset[str],
    by: str | None = None,
) -> list[dict[str, Any]]:
    """One batch of an import, staged (`importing.stage`): the input versions it reads are
    decided here (a stale pin refused now with `on_stale="refuse"`, one derived from an
    erased version redacted or refused as `_write_batch` does), their visibility at
    publication. Items of the import's earlier batches are inputs at version 1, staged."""
    state = _staged_inputs(tx, ns, batch, own)
    stale = _stale_holders(tx, ns, batch, state, on_stale)
    rows: list[dict[str, Any]] = []
    for artifact in batch:  # input-first order, so batch-internal inputs are decided already
        rows.append({**_row(ns, artifact, state, stale, by), **search[artifact.uid]})
        state[artifact.uid] = _Input(1, True, False, None)
    erased = redaction.redact_late(tx, ns, rows, refuse=on_stale == "refuse")
    embedding.claim_space(tx, ns, space)
    importing.stage(tx, ns, key, rows)
    redaction.mark(tx, rows, erased)
    return _written(rows, erased, staged=True)


def _written(
    rows: Sequence[Mapping[str, Any]],
    erased: Mapping[str, redaction.Erasing],
    *,
    staged: bool = False,
) -> list[dict[str, Any]]:
    """What a batch reports per item: its version, whether it is served (or held by
    which event), and the erased input it was redacted for. A staged item is reported
    served, with no holder: its visibility is decided when its import publishes."""
    return [
        {
            "vid": r["vid"],
            "uid": r["uid"],
            "live": True if staged else r["live"],
            "held_by": None if staged else r["held_by"],
            "redacted": erased[r["uid"]].as_dict() if r["uid"] in erased else None,
        }
        for r in rows
    ]


def _staged_inputs(
    tx: Tx, ns: str, batch: Sequence[ArtifactIn], own: frozenset[str]
) -> dict[str, _Input]:
    """The current version of each input from outside the import (read, not locked: the
    publication locks and decides), and the import's earlier items at version 1."""
    in_batch = {a.uid for a in batch}
    outside = sorted({u for a in batch for u in a.inputs if u not in own})
    rows = tx.run(HEADS, keys=[artifact_key(ns, u) for u in outside])
    state = {row["uid"]: _input(row) for row in rows}
    lost = [u for u in outside if u not in state]
    if lost:
        raise UnknownArtifactError(f"{some(lost, 'input')} disappeared while recording; retry")
    earlier = {u for a in batch for u in a.inputs if u in own and u not in in_batch}
    state.update({u: _Input(1, True, False, None) for u in earlier})
    return state


def _lock_inputs(tx: Tx, ns: str, batch: Sequence[ArtifactIn]) -> dict[str, _Input]:
    """The current version of each input from outside the batch, locked (as the barrier
    locks it: a writer commits before a barrier's reach or sees its withdrawal)."""
    in_batch = {a.uid for a in batch}
    outside = sorted({u for a in batch for u in a.inputs if u not in in_batch})
    if not outside:
        return {}
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


def _create(tx: Tx, ns: str, rows: list[dict[str, Any]], sent: list[dict[str, Any]]) -> None:
    """The rows as nodes (`sent`: as `_sent` gives them): served ones without an
    embedding by the plain statement (no vector index update), first, since the others
    may derive from them (never the reverse)."""
    plain = [s for r, s in zip(rows, sent, strict=True) if r["live"] and r["embedding"] is None]
    other = [
        s for r, s in zip(rows, sent, strict=True) if not (r["live"] and r["embedding"] is None)
    ]
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
    withdrew it, which the new artifact joins; refused instead, naming that event, when
    `on_stale` says so."""
    in_batch = {a.uid for a in batch}
    stale = {
        version_id(ns, uid, version): (artifact, uid, version)
        for artifact in batch
        for uid, version in artifact.pinned.items()
        if _pin_is_stale(artifact, uid, version, state, in_batch)
    }
    if not stale:
        return {}
    holders = {row["vid"]: row["event"] for row in tx.run(STALE_HOLDERS, vids=sorted(stale))}
    unknown = sorted(v for v in stale if not holders.get(v))
    if unknown:
        raise InputError(f"{some(unknown, 'input')} not served and no event withdrew them")
    if on_stale == "refuse":
        vid, (artifact, uid, version) = next(iter(stale.items()))
        raise InputError(_stale_message(artifact, uid, version, state[uid], holders[vid]))
    return holders


def _pin_is_stale(
    artifact: ArtifactIn,
    uid: str,
    version: int,
    state: Mapping[str, _Input],
    in_batch: set[str],
) -> bool:
    """Whether a pin names a version no longer served; a pin to a version that never
    existed is an error."""
    current = _Input(1, True, False, None) if uid in in_batch else state[uid]
    if version > current.version or (uid in in_batch and version != 1):
        raise UnknownArtifactError(
            f"artifact {artifact.uid!r}: input {uid}@{version} does not exist "
            f"(the latest version of {uid!r} is {current.version})"
        )
    return uid not in in_batch and _is_stale(artifact, uid, current)


def _stale_message(
    artifact: ArtifactIn, uid: str, version: int, current: _Input, event_key: str
) -> str:
    event = event_key.split("/", 1)[1]
    served = f"the served version is {uid}@{current.version}, since event {event!r}"
    now = f"removed by event {event!r}" if current.removed else served
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
