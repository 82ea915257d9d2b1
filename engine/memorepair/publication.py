"""SPEC §6, publication: republish validated successors, each after all that it requires.

Publication commits in topological batches. Each batch locks the retained inputs of its
successors (a successor whose retained input was withdrawn meanwhile by an overlapping
event is not published, nor is anything requiring it), swaps each successor in for its
predecessor and gives it influence edges from the inputs it actually used. Because no
successor commits before one it requires, readers only ever see a predecessor-closed
served set. Then every other cascade node's outcome is recorded and one last
transaction completes the event.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from memorepair import queries
from memorepair.candidates import CandidateFamily
from memorepair.errors import some
from memorepair.events import PhaseCommit
from memorepair.execution import Attempt
from memorepair.model import EventType, Mode, RepairEventSpec, artifact_key, event_key
from memorepair.store import Store, Tx

CLOSE_WITHDRAWN = queries.named("publication/close_withdrawn")
DISCARD_STAGED = queries.named("publication/discard_staged")
LOCK_INPUTS = queries.named("publication/lock_inputs")
PUBLISH_SUCCESSORS = queries.named("publication/publish_successors")

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
    attempted = {a.candidate.uid for a in attempts}
    ok: dict[str, bool] = {}
    publishable: list[Attempt] = []
    for attempt in attempts:  # attempts are in topological order
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
            publishable.append(attempt)
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
    return publishable, outcomes


def publish(
    store: Store,
    spec: RepairEventSpec,
    family: CandidateFamily,
    selected: Collection[str],
    attempts: Sequence[Attempt],
    *,
    figures: Mapping[str, Any],
    commit: PhaseCommit,
    checkpoint: Callable[[str], None],
) -> Outcomes:
    """Republish in topological batches, record every other outcome, then complete the
    event in one last transaction (which `commit` records as the published phase).

    Batches keep each transaction within the server's memory on large cascades. Because
    they follow the topological order, every commit leaves the served set predecessor-
    closed: a successor goes live only with (or after) every successor it requires. A
    resumed run skips what an interrupted one already published.
    """
    key = event_key(spec.ns, spec.id)
    publishable, outcomes = decide(family, selected, attempts)
    published = _publish_batches(store, spec, publishable, outcomes, checkpoint)
    outcomes.sets["published"] = sorted(a.candidate.uid for a in published)
    for name, uids in outcomes.sets.items():
        if name != "published":
            uids.sort()
    for rows in store.batched(_closing_rows(spec, family, outcomes)):
        store.write(CLOSE_WITHDRAWN, event_key=key, rows=rows)
    live = {a.vid for a in published}
    discarded = [a.vid for a in attempts if a.successor is not None and a.vid not in live]
    counts = {o: len(uids) for o, uids in outcomes.sets.items()}

    def complete(tx: Tx) -> None:
        for vids in store.batched(discarded):
            tx.run(DISCARD_STAGED, event_key=key, vids=vids, reason=DISCARDED)
        commit(tx, {**figures, **counts})

    store.transaction(complete)
    return outcomes


def _publish_batches(
    store: Store,
    spec: RepairEventSpec,
    publishable: Sequence[Attempt],
    outcomes: Outcomes,
    checkpoint: Callable[[str], None],
) -> list[Attempt]:
    """Each batch in its own transaction; the attempts an earlier run published count."""
    published = [a for a in publishable if a.published]
    dropped: set[str] = set()
    for batch in store.batched([a for a in publishable if not a.published]):
        published += store.transaction(
            partial(_publish_batch, spec=spec, batch=batch, dropped=dropped, outcomes=outcomes)
        )
        checkpoint("publishing")  # a crash here must leave a closed, resumable state
    return published


def _publish_batch(
    tx: Tx, *, spec: RepairEventSpec, batch: list[Attempt], dropped: set[str], outcomes: Outcomes
) -> list[Attempt]:
    """One batch: lock retained inputs, drop what lost its support, swap the rest in."""
    kept = _drop_withdrawn_inputs(tx, spec, batch, outcomes, dropped)
    tx.run(
        PUBLISH_SUCCESSORS,
        event_key=event_key(spec.ns, spec.id),
        rows=[
            {"old_vid": a.candidate.vid, "vid": a.vid, "inputs": _input_positions(spec.ns, a)}
            for a in kept
        ],
    )
    return kept


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
