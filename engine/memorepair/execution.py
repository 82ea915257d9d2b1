"""SPEC §6, execution: build every selected successor, in topological order, and stage it.

Each successor is built by its candidate's operator from Ret(e), X_delta, kappa_e and the
staged successors of its required predecessors, judged (`validation.judge`), and handed
to a writer that stages it as a version invisible to serving (`write_staged`); the
repair's writer publishes each batch in the transaction that stages it, once what it
requires is published (`publication.Publisher`). What the operators build from is read
one batch ahead (`_SupportReader`), so the server reads batch k+1's support while it
writes batch k. A resumed run reuses what a crashed one staged (staging is keyed by the
successor's version id).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any

from memorepair import queries
from memorepair.candidates import Candidate, CandidateFamily
from memorepair.codec import artifact_from_row, canonical_json, stored_json
from memorepair.errors import some
from memorepair.fingerprints import Matcher
from memorepair.graphs import topological
from memorepair.model import (
    Artifact,
    EventType,
    Interface,
    Progress,
    RepairEventSpec,
    Visibility,
    artifact_key,
    event_key,
    version_id,
)
from memorepair.operators.base import RepairContext, Successor, Support
from memorepair.operators.common import NoSupport, Taint
from memorepair.operators.registry import OperatorRegistry
from memorepair.operators.sandbox import cpu_clock
from memorepair.store import Row, Store, Tx

READ_VERSIONS = queries.named("execution/read_versions")
READ_INPUT_VERSIONS = queries.named("execution/read_input_versions")
READ_HEADS = queries.named("execution/read_heads")
STAGED_SUCCESSORS = queries.named("execution/staged_successors")
STAGE_SUCCESSORS = queries.named("execution/stage_successors")


@dataclass(frozen=True)
class Attempt:
    """One executed candidate: its staged successor and, after validation, the verdict."""

    candidate: Candidate
    vid: str  # the successor's version id
    successor: Successor | None
    context: RepairContext | None
    validated: bool | None = None
    detail: str = ""
    published: bool = False  # by an interrupted run of the same event
    staged: bool = False  # by an interrupted run of the same event (its node exists)
    #: Measured seconds of its build and validation (the next event's default cost).
    work_s: float | None = None
    #: Its operator found nothing in the support to build from (``NoSupport``): removed.
    removed: bool = False
    #: CPU seconds of the same work (``sandbox.cpu_clock``): a load-independent figure.
    cpu_s: float | None = None

    @property
    def version(self) -> int:
        """The successor's version number, the one its vid was minted with."""
        return int(self.vid.rsplit("@", 1)[1])


def order(family: CandidateFamily, selected: Sequence[str]) -> list[Candidate]:
    """S in Kahn's order over E^req restricted to S, ties broken by uid."""
    uids, _ = topological(sorted(selected), family.requirement_edges)
    return [family.by_uid[uid] for uid in uids]


@dataclass
class _Support:
    """What the operators of one event build from, read once for all candidates."""

    old: dict[str, Artifact] = field(default_factory=dict)  # withdrawn versions, by vid
    used: dict[str, list[tuple[int, str]]] = field(default_factory=dict)  # vid -> (pos, vid)
    latest: dict[str, int] = field(default_factory=dict)  # uid -> highest version written
    inputs: dict[str, Artifact] = field(default_factory=dict)  # every input version, by vid
    retained: dict[str, Support] = field(default_factory=dict)  # served heads, by uid
    heads: set[str] = field(default_factory=set)  # uids whose current version was read
    erased: Matcher | None = None  # an erasing event's fingerprints

    def merge(self, more: _Support) -> None:
        """Add what a later chunk's read found (`erased` stays the event's)."""
        self.old.update(more.old)
        self.used.update(more.used)
        self.latest.update(more.latest)
        self.inputs.update(more.inputs)
        self.retained.update(more.retained)
        self.heads.update(more.heads)


def stage(
    store: Store,
    registry: OperatorRegistry,
    spec: RepairEventSpec,
    family: CandidateFamily,
    selected: Sequence[str],
    *,
    progress: Progress,
    write: Callable[[Attempt], Attempt],
    judge: Callable[[Attempt], Attempt] = lambda attempt: attempt,
    erased: Matcher | None = None,
) -> list[Attempt]:
    """Build every selected successor in topological order and hand each attempt to
    `write`, which stages it in Neo4j (and may publish it: `publication.Publisher`).

    `judge` gives each successor its verdict (the next step's check, handed in) so it is
    staged with it: one write per successor, not a staging and a verdict pass. Every
    attempt goes to `write` in topological order, also a failed build (no successor)
    and one a crashed run of the same event already staged (`Attempt.staged`), so the
    writer knows what each later one requires. The writer stages behind the builds: the
    server writes batch k while operators build k+1. `erased`: an erasing event's
    fingerprints, which every context carries (`successor_meta`). The support is read
    batch by batch, one batch ahead of the builds (`_SupportReader`): the first builds
    start after one batch's read, and later reads overlap the writer's transactions.
    """
    key = event_key(spec.ns, spec.id)
    previous = {row["old_vid"]: row for row in store.read(STAGED_SUCCESSORS, event_key=key)}
    candidates = order(family, selected)
    support = _Support(erased=erased)

    def handed(attempt: Attempt) -> Attempt:
        return write(judge(attempt))

    with _SupportReader(store, spec, family, candidates, support) as chunks:
        return _build_all(
            registry, spec, chunks, len(candidates), support, previous, handed, progress
        )


def stage_rows(attempts: Sequence[Attempt], prepare: Callable[[list[Row]], list[Row]]) -> list[Row]:
    """The staging rows of fresh successors (`stage_successors`), completed by `prepare`
    (`embedding.searchable`: meta terms, and the embedding unless it is deferred)."""
    return prepare([_row(a) for a in attempts if a.successor is not None and not a.staged])


def write_staged(tx: Tx, event_key: str, rows: list[Row]) -> None:
    """Stage a batch's fresh successors (invisible to serving) in the caller's transaction.
    A vid that exists already (a retried transaction that had committed) is skipped."""
    if rows:
        tx.run(STAGE_SUCCESSORS, event_key=event_key, rows=rows)


def build_dry(
    store: Store,
    registry: OperatorRegistry,
    spec: RepairEventSpec,
    family: CandidateFamily,
    selected: Sequence[str],
    *,
    erased: Matcher | None = None,
) -> list[Attempt]:
    """The successors `stage` would build if the event ran now, built in memory only.

    Nothing is written: the event's effect on its roots is applied to what the operators
    see instead (a deleted root is gone from the support and counts as invalidated; a
    corrected or migrated root is its replacement), as the barrier would have made it.
    """
    candidates = order(family, selected)
    support = _read_support(store, spec, family, candidates)
    support.erased = erased
    _apply_delta(spec, family, support)
    return _build_all(
        registry, spec, [candidates], len(candidates), support, {}, lambda a: a, _quiet
    )


def _build_all(
    registry: OperatorRegistry,
    spec: RepairEventSpec,
    chunks: Iterable[list[Candidate]],
    total: int,
    support: _Support,
    previous: Mapping[str, Mapping[str, Any]],
    write: Callable[[Attempt], Attempt],
    progress: Progress,
) -> list[Attempt]:
    """Each candidate's attempt, in topological order, each handed to `write` (which
    returns it as written). `chunks` yields the `total` candidates in topological order,
    each chunk once `support` holds what it builds from."""
    successors: dict[str, Support] = {}  # uid -> its staged successor, as support
    attempts: list[Attempt] = []
    for chunk in chunks:
        for candidate in chunk:
            ctx = _context(spec, support, candidate.vid, successors)
            reused = previous.get(candidate.vid)
            if reused is not None:
                attempt = _reused(candidate, ctx, reused)
            else:
                attempt = _build(registry, candidate, ctx, support.latest[candidate.uid] + 1)
            attempt = write(attempt)
            if attempt.successor is not None:
                successors[candidate.uid] = _staged_support(attempt)
            attempts.append(attempt)
            progress("execute", len(attempts), total)
    return attempts


class _SupportReader:
    """The candidates in topological chunks growing to the store's batch size (a short
    first read, then fewer, larger ones: `Store.ramped`), each yielded once
    its support is read into `support`, with the next chunk's read already running on a
    thread of its own (the server answers it while it writes the previous batch)."""

    def __init__(
        self,
        store: Store,
        spec: RepairEventSpec,
        family: CandidateFamily,
        candidates: Sequence[Candidate],
        support: _Support,
    ) -> None:
        self._read = partial(_read_support, store, spec, family)
        self._chunks = list(store.ramped(candidates))  # the first builds start soon
        self._support = support
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="memorepair-support")

    def __enter__(self) -> _SupportReader:
        return self

    def __exit__(self, *_: object) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)

    def __iter__(self) -> Iterator[list[Candidate]]:
        pending: Future[_Support] | None = None
        for k, chunk in enumerate(self._chunks):
            if pending is None:
                pending = self._pool.submit(self._read, chunk)
            self._support.merge(pending.result())  # re-raises the read's error
            pending = None
            if k + 1 < len(self._chunks):  # what earlier chunks read is not read again
                known = (frozenset(self._support.heads), frozenset(self._support.inputs))
                pending = self._pool.submit(self._read, self._chunks[k + 1], *known)
            yield chunk


def _apply_delta(spec: RepairEventSpec, family: CandidateFamily, support: _Support) -> None:
    """What the barrier would do to the roots, on the support read before it (dry runs)."""
    for vid, artifact in list(support.inputs.items()):
        if artifact.uid not in family.root_vids or artifact.visibility != Visibility.LIVE:
            continue
        gone = Visibility.REMOVED if spec.type is EventType.DELETE else Visibility.SUPERSEDED
        support.inputs[vid] = artifact.model_copy(update={"visibility": gone})
        support.retained.pop(artifact.uid, None)
        if spec.type is not EventType.DELETE:
            content, meta, recipe = spec.delta(artifact.uid)
            replacement = artifact.model_copy(
                update={
                    "version": support.latest.get(artifact.uid, artifact.version) + 1,
                    "content": content,
                    "meta": meta,
                    "recipe": recipe,
                }
            )
            support.retained[artifact.uid] = _support(replacement, "replacement")


def _quiet(step: str, done: int, total: int) -> None:
    """No progress for a dry run."""


def _read_support(
    store: Store,
    spec: RepairEventSpec,
    family: CandidateFamily,
    candidates: Sequence[Candidate],
    heads_read: frozenset[str] = frozenset(),
    vids_read: frozenset[str] = frozenset(),
) -> _Support:
    """The versions being repaired, the exact input versions each used, and the served
    heads of the inputs outside the cascade. Each input is read once, however many
    candidates it fed (hubs feed thousands): `heads_read` (uids) and `vids_read` (input
    versions) were read for earlier chunks already."""
    found = _Support()
    for batch in store.read_batches(READ_VERSIONS, "vids", [c.vid for c in candidates]):
        for row in batch[0]["rows"]:
            artifact = artifact_from_row(row["artifact"], row["visibility"])
            found.old[artifact.vid] = artifact
            found.used[artifact.vid] = [(int(pos), str(vid)) for pos, vid in row["used"]]
            found.latest[artifact.uid] = int(row["latest"])
    outside = sorted(
        {u for a in found.old.values() for u in a.inputs if u not in family.by_uid} - heads_read
    )
    heads = _read(store, READ_HEADS, "keys", [artifact_key(spec.ns, u) for u in outside])
    found.heads = set(outside)
    found.inputs = {**found.old, **heads}
    used = {v for e in found.used.values() for _, v in e}
    wanted = sorted(used - set(found.inputs) - vids_read)
    found.inputs.update(_read(store, READ_INPUT_VERSIONS, "vids", wanted))
    found.retained = {
        head.uid: _support(head, "replacement" if head.uid in family.root_vids else "retained")
        for head in heads.values()
        if head.visibility == Visibility.LIVE
    }
    return found


def read_versions(store: Store, vids: Sequence[str]) -> dict[str, Artifact]:
    """Full artifact versions by vid, contents included (what a preview shows as before)."""
    return _read(store, READ_INPUT_VERSIONS, "vids", list(vids))


def _read(store: Store, query: queries.Query, param: str, values: list[str]) -> dict[str, Artifact]:
    found: dict[str, Artifact] = {}
    for batch in store.read_batches(query, param, values):
        for row in batch[0]["rows"]:
            artifact = artifact_from_row(row["artifact"], row["visibility"])
            found[artifact.vid] = artifact
    return found


def _context(
    spec: RepairEventSpec, support: _Support, vid: str, successors: Mapping[str, Support]
) -> RepairContext:
    """Support: the staged successor of an affected input, else its served current version
    (retained, or the replacement of a root); `retained` holds only live heads."""
    artifact = support.old[vid]
    usable: list[Support] = []
    invalidated: list[Artifact] = []
    used = sorted(support.used.get(vid, []))
    used_by_uid = {a.uid: a for a in (support.inputs[v] for _, v in used)}
    for uid in artifact.inputs:
        if uid in successors:
            usable.append(successors[uid])
        elif uid in support.retained:
            usable.append(support.retained[uid])
        old = used_by_uid.get(uid)
        if old is not None and (uid in successors or old.visibility != Visibility.LIVE):
            invalidated.append(old)  # the version it used is gone: never draw on it again
    return RepairContext(
        event_type=spec.type,
        artifact=artifact,
        support=tuple(usable),
        invalidated=tuple(invalidated),
        interface=spec.interface if isinstance(spec.interface, Interface) else None,
        erased=support.erased,
    )


def _reused(candidate: Candidate, ctx: RepairContext, row: Mapping[str, Any]) -> Attempt:
    """The attempt an interrupted run of the same event staged (and maybe validated)."""
    staged = artifact_from_row(row["artifact"], "Staged")
    successor = Successor(
        content=staged.content,
        inputs=tuple(row["artifact"].get("inputs") or ()),
        recipe=staged.recipe,
        meta=staged.meta,
    )
    artifact = row["artifact"]
    return Attempt(
        candidate,
        staged.vid,
        successor,
        ctx,
        artifact.get("validated"),
        artifact.get("validation") or "",
        bool(row["published"]),
        staged=True,
    )


def _build(
    registry: OperatorRegistry, candidate: Candidate, ctx: RepairContext, version: int
) -> Attempt:
    vid = version_id(ctx.artifact.ns, candidate.uid, version)
    operator = registry.named(candidate.operator) if candidate.operator else None
    if operator is None:
        return Attempt(candidate, vid, None, ctx, False, f"no {candidate.mode.value} operator")
    # The wall clock is read inside the CPU clock's window (started after it, stopped
    # before it): a thread's CPU clock is a system call, which on a loaded machine can
    # cost more than a millisecond replay, and it is not the operator's work.
    cpu_started, started = cpu_clock(), time.perf_counter()
    try:
        successor = operator.build(ctx)
    except NoSupport as exc:  # the remove mode, decided by the operator
        return Attempt(
            candidate, vid, None, ctx, False, f"nothing to build from: {exc}", removed=True
        )
    except Exception as exc:  # an operator that cannot build fails this candidate only
        return Attempt(
            candidate, vid, None, ctx, False, f"build failed: {type(exc).__name__}: {exc}"
        )
    allowed = {s.uid for s in ctx.support}
    stray = [u for u in successor.inputs if u not in allowed]
    if stray:
        return Attempt(
            candidate, vid, None, ctx, False, f"successor cites non-support {some(stray, 'input')}"
        )
    meta = successor_meta(ctx, successor)
    work_s, cpu_s = time.perf_counter() - started, cpu_clock() - cpu_started
    return Attempt(candidate, vid, replace(successor, meta=meta), ctx, work_s=work_s, cpu_s=cpu_s)


def _support(artifact: Artifact, origin: str) -> Support:
    return Support(
        uid=artifact.uid,
        version=artifact.version,
        kind=artifact.kind,
        arch=artifact.arch,
        content=artifact.content,
        meta=artifact.meta,
        origin=origin,  # type: ignore[arg-type]
    )


def _staged_support(attempt: Attempt) -> Support:
    """A staged successor as the support of the candidates that require it."""
    assert attempt.successor is not None and attempt.context is not None
    old = attempt.context.artifact
    return Support(
        uid=old.uid,
        version=attempt.version,
        kind=old.kind,
        arch=old.arch,
        content=attempt.successor.content,
        meta=attempt.successor.meta,
        origin="successor",
    )


def successor_meta(ctx: RepairContext, successor: Successor) -> dict[str, Any]:
    """The successor's meta: what its operator set, plus what the predecessor had that
    does not draw on invalidated support.

    Operators return what they changed (often nothing); dropping the rest would lose facts
    later events depend on, such as a tool-call record's `call` or a skill's `title`. But a
    meta value quoting a deleted record (a skill's `instruction` copied from it) is exactly
    what must not be served again, so it is rebuilt from retained support: left out. That
    covers a phrase of invalidated support (`Taint`) and, for an erasing event, any
    fingerprint of the erased text (an identifier written in other words, such as "Quote
    the passport QX77121" derived from "Ana's passport number is QX77121").
    """
    old = ctx.artifact.meta
    if not old or (not ctx.invalidated and not ctx.erased):
        return {**old, **successor.meta}
    taint = Taint(ctx)
    erased = ctx.erased

    def derived(key: str, value: Any) -> bool:
        if erased is not None and erased.hits([key, value]):
            return True
        return taint.phrase(f"{key} {canonical_json(value)}") is not None

    kept = {k: v for k, v in old.items() if not derived(k, v)}
    return {**kept, **successor.meta}


def _row(attempt: Attempt) -> Row:
    assert attempt.successor is not None and attempt.context is not None
    successor = attempt.successor
    return {
        "old_vid": attempt.candidate.vid,
        "vid": attempt.vid,
        "version": attempt.version,
        "content": successor.content,
        "recipe": stored_json(successor.recipe.model_dump() if successor.recipe else None),
        "meta": stored_json(dict(successor.meta)),
        "inputs": list(successor.inputs) or None,  # none stored, as for a fresh record
        "validated": attempt.validated,
        "validation": attempt.detail or None,
        "operator": attempt.candidate.mode.value,
        "work_s": attempt.work_s,
    }
