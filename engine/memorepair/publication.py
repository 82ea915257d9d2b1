"""SPEC §6, publication: republish validated successors, each after all that it requires.

Publication commits in topological batches, each in the transaction that stages it
(`Publisher`, the repair's writer: execution builds the next batch while it writes).
Each batch takes a stripe of the namespace's publication lock, which every barrier takes
whole, and reads which retained inputs of its successors are served (a successor whose
retained input was withdrawn meanwhile by an overlapping event is not published, nor is
anything requiring it), swaps each successor in for its predecessor and gives it
influence edges from the inputs it actually used. A batch starts only once every batch
holding what it reads or requires has committed, so no successor commits before one it
requires: readers only ever see a predecessor-closed served set. Then every other
cascade node's outcome is recorded and one last transaction completes the event
(`publish`).
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
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
from memorepair.model import (
    EventType,
    Mode,
    Progress,
    RepairEventSpec,
    artifact_key,
    event_key,
    publish_lock_keys,
)
from memorepair.store import RAMP_FIRST, TX_BYTES, Row, Store, Tx, ramp, rest
from memorepair.validation import RECORD_VALIDATION

CLOSE_WITHDRAWN = queries.named("publication/close_withdrawn")
DISCARD_STAGED = queries.named("publication/discard_staged")
LOCK_STRIPE = queries.named("publication/lock_stripe")
PUBLISH_FRESH = queries.named("publication/publish_fresh")
PUBLISH_SUCCESSORS = queries.named("publication/publish_successors")
SERVED_VERSIONS = queries.named("publication/served_versions")
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
    transaction per batch, on threads of its own while the caller builds the next batch.

    `add` takes every attempt in topological order (execution's `write`). Each full batch
    goes to a writer thread once a writer is free (`writers`, one per lock stripe) and
    every batch in flight that holds what it reads or requires has committed, so a
    batch's successors are served before any batch that requires them is written, and
    what was dropped or published is known when that batch is decided. Two independent
    batches (a wide layer of the cascade) are written at once: the server writes one
    while it commits the other. In its transaction a batch stages its fresh successors
    (`execution.write_staged`), then publishes those that validated and whose required
    predecessors were published (`decide`'s rule), after checking their retained inputs
    under its stripe. A crash loses at most the batches in flight; a resumed run reuses
    what committed (staged, published). After each commit the writer rests so that its writes
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
        writers: int = 1,
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
        self._bytes = 0  # the batch's successors' content
        self._sizes = ramp(store.batch_size, RAMP_FIRST)
        self._target = next(self._sizes)
        self._writers = writers if pace >= 1.0 else 1  # a paced repair writes one at a time
        self._guard = threading.Lock()  # what the writers learn: _ok, _dropped, outcomes
        self._pool = ThreadPoolExecutor(
            max_workers=self._writers, thread_name_prefix="memorepair-publish"
        )
        self._flight: deque[_Flight] = deque()  # oldest first
        self._handed = 0

    def add(self, attempt: Attempt) -> Attempt:
        """Queue one attempt (in topological order); a full batch goes to the writer. The
        first holds `RAMP_FIRST` attempts, each next one twice as many up to the store's
        batch size (the writer starts soon, later commits are few); any closes at
        `TX_BYTES` of successors' content."""
        self._batch.append(attempt)
        if attempt.successor is not None:
            self._bytes += len(attempt.successor.content.encode())
        if len(self._batch) >= self._target or self._bytes >= TX_BYTES:
            self._hand_over()
            self._checkpoint("staging")
        return attempt

    def _hand_over(self) -> None:
        batch, self._batch, self._bytes = self._batch, [], 0
        self._target = next(self._sizes)
        prepared = _Prepared.of(self._spec.ns, batch, self._prepare)  # while others are written
        self._make_room(_needs(batch))
        stripe, self._handed = self._handed % self._writers, self._handed + 1
        future = self._pool.submit(self._write, prepared, stripe)
        self._flight.append(_Flight(future, frozenset(a.candidate.uid for a in batch)))

    def _make_room(self, needs: Collection[str]) -> None:
        """Wait, oldest first, until a writer is free and no batch in flight holds what the
        next one reads or requires (it must see those committed: their decisions, their
        new versions as inputs). Re-raises a writer's error."""
        while self._flight and (
            len(self._flight) >= self._writers
            or any(f.uids.intersection(needs) for f in self._flight)
        ):
            self._flight.popleft().future.result()

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
                while self._flight:
                    self._flight.popleft().future.result()
                self._progress("publish", self._total, self._total)
            for flight in self._flight:  # the caller's error wins; the batches still end
                flight.future.exception()
        finally:
            self._pool.shutdown(wait=True)

    def _write(self, prepared: _Prepared, stripe: int) -> None:
        batch = prepared.batch
        self._progress("publish", self._written, self._total)  # before the batch commits
        started = time.monotonic()
        with self._guard:  # committed decisions only: a retried batch decides again
            ok, dropped = dict(self._ok), frozenset(self._dropped)
        decided = Outcomes()
        publishable: list[Attempt] = []
        for attempt in batch:  # topological: what one requires is decided before it
            if attempt.published:  # by an interrupted run of the same event
                ok[attempt.candidate.uid] = True
            elif _publishable(attempt, ok, decided):
                publishable.append(attempt)
        kept, lost = self._store.transaction(
            partial(
                _stage_and_publish,
                spec=self._spec,
                prepared=prepared,
                publishable=publishable,
                dropped=dropped,
                stripe=stripe,
                backlog=self._backlog,
            )
        )
        with self._guard:
            self._learn(batch, ok, decided, kept, lost)
        self._checkpoint("publishing")  # a crash here must leave a closed, resumable state
        rest(time.monotonic() - started, self._pace)

    def _learn(
        self,
        batch: list[Attempt],
        ok: dict[str, bool],
        decided: Outcomes,
        kept: list[Attempt],
        lost: dict[str, list[str]],
    ) -> None:
        """What a committed batch tells the batches after it (under `_guard`)."""
        self._ok.update(ok)
        self._written += len(batch)
        self.published += [a for a in batch if a.published] + kept
        for name, uids in decided.sets.items():
            for uid in uids:
                self.outcomes.add(name, uid, decided.details.get(uid, ""))
        for uid, inputs in lost.items():
            self._dropped.add(uid)
            self.outcomes.add(
                "input_withdrawn",
                uid,
                f"support {some(inputs, 'input')} was withdrawn or replaced by an "
                "overlapping event",
            )


class _Flight(NamedTuple):
    """A batch handed to a writer: its future and the uids of its candidates."""

    future: Future[None]
    uids: frozenset[str]


def _needs(batch: Sequence[Attempt]) -> set[str]:
    """The uids a batch's successors read or require."""
    needs = {u for a in batch for u in a.candidate.requires}
    needs.update(u for a in batch if a.successor is not None for u in a.successor.inputs)
    return needs


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
    dropped: frozenset[str],
    stripe: int,
    backlog: EmbeddingBacklog | None,
) -> tuple[list[Attempt], dict[str, list[str]]]:
    """One batch in one transaction. What may be published has its retained inputs checked
    first, under the writer's stripe of the publication lock; a fresh successor that passes
    is then written once, already published (`publish_fresh`), one a crashed run staged is
    published as staged, and every other fresh successor (failed, blocked, input withdrawn)
    is staged for audit. Once the batch commits, the published successors' vectors are
    queued (deferred). Returns the published attempts and, per dropped uid, the inputs it
    lost (a retried transaction recomputes both)."""
    key = event_key(spec.ns, spec.id)
    kept, lost = (
        _drop_withdrawn_inputs(tx, spec, publishable, dropped, stripe) if publishable else ([], {})
    )
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
    return kept, lost


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
    dropped: frozenset[str],
    stripe: int,
) -> tuple[list[Attempt], dict[str, list[str]]]:
    """Take the writer's stripe of the publication lock, then drop every successor built on
    a retained input that is no longer served, or no longer at the version it was built
    from (an overlapping event corrected it since), or requiring one dropped before.

    A barrier takes every stripe first thing (`barrier.withdraw`), so one that withdraws an
    input commits either before the stripe is taken here (the input reads as withdrawn or
    replaced) or after this batch commits (its reach sees the new influence edges). Two
    batches of a repair, in different stripes, do not wait for each other. `dropped`
    carries across batches; returns the kept attempts and, per newly dropped uid, the
    inputs it lost.
    """
    tx.run(LOCK_STRIPE, key=publish_lock_keys(spec.ns)[stripe], ns=spec.ns)
    own = {a.candidate.uid for a in batch}
    retained = sorted({u for a in batch for u in _inputs(a) - own})
    keys = [artifact_key(spec.ns, u) for u in retained]
    served = dict(tx.run(SERVED_VERSIONS, keys=keys)[0]["live"])
    kept: list[Attempt] = []
    lost_here: dict[str, list[str]] = {}
    skip = set(dropped)
    for attempt in batch:  # topological: a dependent comes after what it requires
        lost = sorted(_stale_inputs(attempt, own, served) | (_inputs(attempt) & skip))
        if lost:
            skip.add(attempt.candidate.uid)
            lost_here[attempt.candidate.uid] = lost
        else:
            kept.append(attempt)
    return kept, lost_here


def _inputs(attempt: Attempt) -> set[str]:
    return set(attempt.successor.inputs) if attempt.successor else set()


def _stale_inputs(attempt: Attempt, own: set[str], served: Mapping[str, int]) -> set[str]:
    """The retained inputs of `attempt` not served now, or served at another version than
    the one its successor was built from (when the build's support is known: a successor
    a crashed run staged is checked for being served only)."""
    built_from = (
        {s.uid: s.version for s in attempt.context.support} if attempt.context is not None else {}
    )
    return {
        u
        for u in _inputs(attempt) - own
        if u not in served or built_from.get(u, served[u]) != served[u]
    }


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
