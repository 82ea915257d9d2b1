"""SPEC §6, publication: republish validated successors, each after all that it requires.

Publication commits in topological batches, each in the transaction that stages it
(`Publisher`, the repair's writer: execution builds batch k+1 while it writes batch k).
Each batch locks the retained inputs of its successors (a successor whose retained input
was withdrawn meanwhile by an overlapping event is not published, nor is anything
requiring it), swaps each successor in for its predecessor and gives it influence edges
from the inputs it actually used. Because batches commit one after the other in
topological order, no successor commits before one it requires: readers only ever see a
predecessor-closed served set. Then every other cascade node's outcome is recorded and
one last transaction completes the event (`publish`).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from types import TracebackType
from typing import Any, NamedTuple

from memorepair import execution, queries
from memorepair.candidates import CandidateFamily
from memorepair.embedding import EmbeddingBacklog, Pending, embeds
from memorepair.errors import some
from memorepair.events import PhaseCommit
from memorepair.execution import Attempt
from memorepair.model import EventType, Mode, Progress, RepairEventSpec, artifact_key, event_key
from memorepair.store import Row, Store, Tx, rest
from memorepair.validation import RECORD_VALIDATION

CLOSE_WITHDRAWN = queries.named("publication/close_withdrawn")
DISCARD_STAGED = queries.named("publication/discard_staged")
LOCK_INPUTS = queries.named("publication/lock_inputs")
PUBLISH_FRESH = queries.named("publication/publish_fresh")
PUBLISH_SUCCESSORS = queries.named("publication/publish_successors")
UNINDEXED_SUCCESSORS = queries.named("publication/unindexed_successors")

#: Why a staged successor stays unpublished (its node is kept for audit, marked).
DISCARDED = "not republished (failed, blocked or input withdrawn)"

OUTCOMES = (
    "published",
    "removed",
    "failed",
    "blocked",
    "input_withdrawn",
    "unselected",
    "not_executable",
    "root_deleted",
    "root_replaced",
)


@dataclass
class Outcomes:
    """uids per outcome for one event (the audit's sets)."""

    sets: dict[str, list[str]] = field(default_factory=lambda: {o: [] for o in OUTCOMES})
    details: dict[str, str] = field(default_factory=dict)

    def add(self, outcome: str, uid: str, detail: str = "") -> None:
        self.sets[outcome].append(uid)
        if detail:
            self.details[uid] = detail


def decide(
    family: CandidateFamily, selected: Collection[str], attempts: Sequence[Attempt]
) -> tuple[list[Attempt], Outcomes]:
    """Which validated successors are publishable (closure over republished predecessors)."""
    outcomes = Outcomes()
    ok: dict[str, bool] = {}
    publishable = [a for a in attempts if _publishable(a, ok, outcomes)]
    _other_outcomes(family, selected, attempts, outcomes)
    return publishable, outcomes


def _publishable(attempt: Attempt, ok: dict[str, bool], outcomes: Outcomes) -> bool:
    """A validated successor whose required predecessors are all publishable (attempts
    come in topological order, so those are decided already); `ok` and `outcomes` learn
    the answer."""
    c = attempt.candidate
    missing = [u for u in c.requires if not ok.get(u, False)]
    if attempt.removed:
        ok[c.uid] = False
        outcomes.add("removed", c.uid, attempt.detail)
    elif attempt.successor is None or attempt.validated is not True:
        ok[c.uid] = False
        outcomes.add("failed", c.uid, attempt.detail or "validation failed")
    elif missing:
        ok[c.uid] = False
        outcomes.add(
            "blocked", c.uid, f"required predecessors not republished: {some(missing, 'uid')}"
        )
    else:
        ok[c.uid] = True
    return ok[c.uid]


def _other_outcomes(
    family: CandidateFamily,
    selected: Collection[str],
    attempts: Sequence[Attempt],
    outcomes: Outcomes,
) -> None:
    """The outcome of every candidate that was not attempted."""
    attempted = {a.candidate.uid for a in attempts}
    in_selection = set(selected)
    for c in family.candidates:
        if c.uid in attempted:
            continue
        if c.mode is Mode.REMOVE:
            outcomes.add("removed", c.uid, c.reason)
        elif not c.executable:
            outcomes.add("not_executable", c.uid, c.reason)
        elif c.uid not in in_selection:
            outcomes.add("unselected", c.uid, "value below lambda-weighted cost (not selected)")


class Publisher:
    """The repair's writer: stages and publishes successors in topological batches, one
    transaction per batch, on a thread of its own while the caller builds the next batch.

    `add` takes every attempt in topological order (execution's `write`). Each full batch
    goes to the writer thread once the previous batch committed, so a batch's successors
    are served before any batch that may require them is written, and what was dropped or
    published is known when the next batch is decided. In its transaction a batch stages
    its fresh successors (`execution.write_staged`), then publishes those that validated
    and whose required predecessors were published (`decide`'s rule), after locking their
    retained inputs. A crash loses at most the batch in flight; a resumed run reuses what
    committed (staged, published). After each commit the writer rests so that its writes
    take a `pace` share of the time (MEMOREPAIR_REPAIR_PACE), leaving the rest of the
    server's cores to serving reads. With a `backlog` (deferred embeddings) successors go
    live without vectors, and each committed batch is handed to the backlog. `progress`
    hears ("publish", attempts written, `total`) as each batch starts, and at the end.
    """

    def __init__(
        self,
        store: Store,
        spec: RepairEventSpec,
        *,
        prepare: Callable[[list[Row]], list[Row]],
        checkpoint: Callable[[str], None],
        backlog: EmbeddingBacklog | None,
        pace: float = 1.0,
        progress: Progress = lambda step, done, total: None,
        total: int = 0,
    ) -> None:
        self._store = store
        self._progress = progress
        self._total = total
        self._written = 0
        self._spec = spec
        self._prepare = prepare
        self._checkpoint = checkpoint
        self._backlog = backlog
        self._pace = pace
        self.outcomes = Outcomes()
        self.published: list[Attempt] = []
        self._ok: dict[str, bool] = {}
        self._dropped: set[str] = set()
        self._batch: list[Attempt] = []
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="memorepair-publish")
        self._pending: Future[None] | None = None

    def add(self, attempt: Attempt) -> Attempt:
        """Queue one attempt (in topological order); a full batch goes to the writer."""
        self._batch.append(attempt)
        if len(self._batch) >= self._store.batch_size:
            self._hand_over()
            self._checkpoint("staging")
        return attempt

    def _hand_over(self) -> None:
        batch, self._batch = self._batch, []
        prepared = _Prepared.of(self._spec.ns, batch, self._prepare)  # while k-1 is written
        if self._pending is not None:
            self._pending.result()  # one batch in flight; re-raises its error
        self._pending = self._pool.submit(self._write, prepared)

    def __enter__(self) -> Publisher:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        try:
            if error is None:
                if self._batch:
                    self._hand_over()
                if self._pending is not None:
                    self._pending.result()
                self._progress("publish", self._total, self._total)
            elif self._pending is not None:  # the caller's error wins; the batch still ends
                self._pending.exception()
        finally:
            self._pool.shutdown(wait=True)

    def _write(self, prepared: _Prepared) -> None:
        batch = prepared.batch
        self._progress("publish", self._written, self._total)  # before the batch commits
        started = time.monotonic()
        ok = dict(self._ok)  # committed decisions only: a retried batch decides again
        decided = Outcomes()
        publishable: list[Attempt] = []
        for attempt in batch:  # topological: what one requires is decided before it
            if attempt.published:  # by an interrupted run of the same event
                ok[attempt.candidate.uid] = True
            elif _publishable(attempt, ok, decided):
                publishable.append(attempt)
        kept = self._store.transaction(
            partial(
                _stage_and_publish,
                spec=self._spec,
                prepared=prepared,
                publishable=publishable,
                dropped=self._dropped,
                outcomes=self.outcomes,
                backlog=self._backlog,
            )
        )
        self._ok = ok
        self._written += len(batch)
        self.published += [a for a in batch if a.published] + kept
        for name, uids in decided.sets.items():
            for uid in uids:
                self.outcomes.add(name, uid, decided.details.get(uid, ""))
        self._checkpoint("publishing")  # a crash here must leave a closed, resumable state
        rest(time.monotonic() - started, self._pace)


class _Links(NamedTuple):
    """What publishing adds to a successor's row: the inputs it used and whether it is
    embedded (the field names are `publish_fresh`'s row keys)."""

    edges: list[tuple[int, str]]  # (position, input key) of each distinct input
    embeds: bool  # `_embeds`


@dataclass(frozen=True)
class _Prepared:
    """A batch with its rows, built on the caller's thread while the writer still writes
    the previous batch, so the writer's transaction starts as soon as that one commits
    (the server would otherwise wait on this Python work every batch)."""

    batch: list[Attempt]
    rows: list[Row]  # staging rows of the fresh successors (`execution.stage_rows`)
    verdicts: list[Row]  # judged successors a crashed run staged (`_verdicts`)
    links: dict[str, _Links]  # by vid

    @classmethod
    def of(
        cls, ns: str, batch: list[Attempt], prepare: Callable[[list[Row]], list[Row]]
    ) -> _Prepared:
        links = {
            a.vid: _Links(_input_positions(ns, a), _embeds(a))
            for a in batch
            if a.successor is not None
        }
        return cls(batch, execution.stage_rows(batch, prepare), _verdicts(batch), links)


def _verdicts(attempts: Sequence[Attempt]) -> list[Row]:
    """Verdicts for successors a crashed run staged and this run judged (an engine that
    validated after staging left them without one; re-recording one is harmless)."""
    return [
        {"vid": a.vid, "validated": a.validated, "validation": a.detail or None}
        for a in attempts
        if a.staged and not a.published and a.successor is not None and a.validated is not None
    ]


def _stage_and_publish(
    tx: Tx,
    *,
    spec: RepairEventSpec,
    prepared: _Prepared,
    publishable: list[Attempt],
    dropped: set[str],
    outcomes: Outcomes,
    backlog: EmbeddingBacklog | None,
) -> list[Attempt]:
    """One batch in one transaction. What may be published has its retained inputs locked
    and checked first; a fresh successor that passes is then written once, already
    published (`publish_fresh`), one a crashed run staged is published as staged, and
    every other fresh successor (failed, blocked, input withdrawn) is staged for audit.
    Once the batch commits, the published successors' vectors are queued (deferred)."""
    key = event_key(spec.ns, spec.id)
    kept = _drop_withdrawn_inputs(tx, spec, publishable, outcomes, dropped) if publishable else []
    live = {a.vid for a in kept}
    rows, links = prepared.rows, prepared.links
    execution.write_staged(tx, key, [r for r in rows if r["vid"] not in live])
    if prepared.verdicts:
        tx.run(RECORD_VALIDATION, rows=prepared.verdicts)
    deferred = backlog is not None
    fresh = [{**r, **links[r["vid"]]._asdict()} for r in rows if r["vid"] in live]
    if fresh:
        tx.run(PUBLISH_FRESH, event_key=key, rows=fresh, deferred=deferred)
    staged = [
        {
            "old_vid": a.candidate.vid,
            "vid": a.vid,
            "inputs": links[a.vid].edges,
            "embeds": links[a.vid].embeds,
        }
        for a in kept
        if a.staged
    ]
    if staged:
        tx.run(PUBLISH_SUCCESSORS, event_key=key, rows=staged, deferred=deferred)
    if backlog is not None:
        queued = [_pending(spec.ns, a) for a in kept if links[a.vid].embeds]
        tx.after_commit(lambda: backlog.add(queued))
    return kept


def _embeds(attempt: Attempt) -> bool:
    """Whether the successor is embedded: not when its meta says `memorepair_embed: false`
    (kept from its predecessor); then its predecessor's vector, if any, goes at once."""
    return attempt.successor is not None and embeds(attempt.successor.meta)


def publish(
    store: Store,
    spec: RepairEventSpec,
    family: CandidateFamily,
    selected: Collection[str],
    attempts: Sequence[Attempt],
    *,
    written: Publisher,
    figures: Mapping[str, Any],
    commit: PhaseCommit,
) -> Outcomes:
    """Record every outcome on the audit edges, discard what stays unpublished, and
    complete the event in one last transaction (which `commit` records as the published
    phase). `written` is the writer that staged and published the attempts' batches."""
    key = event_key(spec.ns, spec.id)
    outcomes = written.outcomes
    _other_outcomes(family, selected, attempts, outcomes)
    outcomes.sets["published"] = sorted(a.candidate.uid for a in written.published)
    for name, uids in outcomes.sets.items():
        if name != "published":
            uids.sort()
    for rows in store.batched(_closing_rows(spec, family, outcomes)):
        store.write(CLOSE_WITHDRAWN, event_key=key, rows=rows)
    live = {a.vid for a in written.published}
    discarded = [a.vid for a in attempts if a.successor is not None and a.vid not in live]
    counts = {o: len(uids) for o, uids in outcomes.sets.items()}

    def complete(tx: Tx) -> None:
        for vids in store.batched(discarded):
            tx.run(DISCARD_STAGED, event_key=key, vids=vids, reason=DISCARDED)
        commit(tx, {**figures, **counts})

    store.transaction(complete)
    return outcomes


def _pending(ns: str, attempt: Attempt) -> Pending:
    """A published successor whose vector the backlog writes: its predecessor's, copied,
    when the content did not change (no embedder call)."""
    assert attempt.successor is not None and attempt.context is not None
    content = attempt.successor.content
    return Pending(ns, attempt.vid, content, reuse=content == attempt.context.artifact.content)


def unindexed(store: Store, spec: RepairEventSpec) -> list[Pending]:
    """The event's published successors still without their vector, or whose superseded
    predecessor still holds one: what a process killed before its embedding writer ended
    left undone (a resumed run queues them again)."""
    (found,) = store.read(UNINDEXED_SUCCESSORS, event_key=event_key(spec.ns, spec.id))
    return [
        Pending(spec.ns, r["vid"], r["content"], reuse=r["reuse"])
        for r in found["rows"]
        if embeds(json.loads(r["meta"]) if r["meta"] else None)
    ]


def _input_positions(ns: str, attempt: Attempt) -> list[tuple[int, str]]:
    """(position, key) of each distinct input a successor used, at its first position."""
    seen: dict[str, int] = {}
    for pos, uid in enumerate(attempt.successor.inputs if attempt.successor else ()):
        seen.setdefault(uid, pos)
    return [(pos, artifact_key(ns, uid)) for uid, pos in seen.items()]


def _drop_withdrawn_inputs(
    tx: Tx,
    spec: RepairEventSpec,
    batch: list[Attempt],
    outcomes: Outcomes,
    dropped: set[str],
) -> list[Attempt]:
    """Lock retained inputs; drop successors built on one that is no longer served.

    `dropped` carries across batches: a successor requiring a dropped one is dropped too.
    A retry of the transaction recomputes the same answer, since it starts from the same
    `dropped` (only the caller's copy is updated, after the commit).
    """
    own = {a.candidate.uid for a in batch}
    retained = sorted({u for a in batch if a.successor for u in a.successor.inputs if u not in own})
    keys = [artifact_key(spec.ns, u) for u in retained]
    served = set(tx.run(LOCK_INPUTS, keys=keys)[0]["live"])
    gone = {u for u in retained if u not in served}
    kept: list[Attempt] = []
    lost_here: dict[str, list[str]] = {}
    skip = set(dropped)
    for attempt in batch:  # topological: a dependent comes after what it requires
        inputs = set(attempt.successor.inputs) if attempt.successor else set()
        lost = sorted(inputs & (gone | skip))
        if lost:
            skip.add(attempt.candidate.uid)
            lost_here[attempt.candidate.uid] = lost
        else:
            kept.append(attempt)
    tx.after_commit(lambda: _record_dropped(lost_here, dropped, outcomes))
    return kept


def _record_dropped(lost_here: dict[str, list[str]], dropped: set[str], outcomes: Outcomes) -> None:
    for uid, lost in lost_here.items():
        dropped.add(uid)
        outcomes.add(
            "input_withdrawn",
            uid,
            f"support {some(lost, 'input')} was withdrawn by an overlapping event",
        )


def _closing_rows(
    spec: RepairEventSpec, family: CandidateFamily, outcomes: Outcomes
) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    vid_of = {c.uid: c.vid for c in family.candidates}
    for outcome, uids in outcomes.sets.items():
        if outcome in ("published", "root_deleted", "root_replaced"):
            continue
        for uid in uids:
            rows.append(
                {
                    "vid": vid_of[uid],
                    "outcome": outcome,
                    "detail": outcomes.details.get(uid, ""),
                    "remove": outcome == "removed",
                }
            )
    if spec.type is EventType.DELETE:
        for uid, vid in family.root_vids.items():
            outcomes.add("root_deleted", uid)
            rows.append(
                {
                    "vid": vid,
                    "outcome": "root_deleted",
                    "detail": spec.reason,
                    "remove": True,
                }
            )
    else:
        outcomes.sets["root_replaced"] = sorted(family.root_vids)
    return rows
