"""Step 5b: republish validated successors whose required predecessors are republished.

Publication is one transaction: it locks the retained inputs of every successor (a
successor whose retained input was withdrawn meanwhile by an overlapping event is not
published, nor is anything requiring it), swaps each successor in for its predecessor,
gives it influence edges from the inputs it actually used, records every other cascade
node's outcome, and completes the event. Readers see the whole repair or none of it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from memorepair.candidates import CandidateFamily
from memorepair.execution import Attempt
from memorepair.model import EventType, Mode, RepairEventSpec, artifact_key
from memorepair.store import Store, Tx

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
    family: CandidateFamily, selected: Sequence[int], attempts: Sequence[Attempt]
) -> tuple[list[Attempt], Outcomes]:
    """Which validated successors are publishable (closure over republished predecessors)."""
    outcomes = Outcomes()
    by_index = {a.candidate.index: a for a in attempts}
    ok: dict[str, bool] = {}
    publishable: list[Attempt] = []
    for attempt in attempts:  # attempts are in topological order
        c = attempt.candidate
        missing = [u for u in c.requires if not ok.get(u, False)]
        if attempt.successor is None or attempt.validated is not True:
            ok[c.uid] = False
            outcomes.add("failed", c.uid, attempt.detail or "validation failed")
        elif missing:
            ok[c.uid] = False
            outcomes.add("blocked", c.uid, f"required predecessors not republished: {missing}")
        else:
            ok[c.uid] = True
            publishable.append(attempt)
    chosen = set(selected)
    for c in family.candidates:
        if c.index in by_index:
            continue
        if c.mode is Mode.REMOVE:
            outcomes.add("removed", c.uid, c.reason)
        elif not c.executable:
            outcomes.add("not_executable", c.uid, c.reason)
        elif c.index not in chosen:
            outcomes.add("unselected", c.uid, "value below lambda-weighted cost (not selected)")
    return publishable, outcomes


def publish(
    store: Store,
    spec: RepairEventSpec,
    family: CandidateFamily,
    selected: Sequence[int],
    attempts: Sequence[Attempt],
    figures: dict[str, Any],
) -> Outcomes:
    key = f"{spec.ns}/{spec.id}"

    def work(tx: Tx) -> Outcomes:
        publishable, outcomes = decide(family, selected, attempts)
        publishable = _drop_withdrawn_inputs(tx, spec, publishable, outcomes)
        for outcome in outcomes.sets.values():
            outcome.sort()
        for uid in [a.candidate.uid for a in publishable]:
            outcomes.sets["published"].append(uid)
        rows = [{"old_vid": a.candidate.vid, "vid": a.vid} for a in publishable]
        links = [
            {"vid": a.vid, "input_keys": [artifact_key(spec.ns, u) for u in a.successor.inputs]}
            for a in publishable
            if a.successor is not None
        ]
        size = store.settings.batch_size
        for start in range(0, len(rows), size):
            tx.run("publication/publish_successors", event_key=key, rows=rows[start : start + size])
        for start in range(0, len(links), size):
            tx.run("publication/link_inputs", rows=links[start : start + size])
        closing = _closing_rows(spec, family, outcomes)
        for start in range(0, len(closing), size):
            tx.run("publication/close_withdrawn", event_key=key, rows=closing[start : start + size])
        published = {a.vid for a in publishable}
        discarded = [a.vid for a in attempts if a.successor is not None and a.vid not in published]
        if discarded:
            tx.run("publication/discard_staged", event_key=key, vids=discarded,
                   reason="not republished (failed, blocked or input withdrawn)")
        counts = {o: len(uids) for o, uids in outcomes.sets.items()}
        tx.run(
            "events/set_phase",
            key=key,
            phase="published",
            status="completed",
            figures={**figures, **counts},
        )
        return outcomes

    return store.transaction(work)


def _drop_withdrawn_inputs(
    tx: Tx, spec: RepairEventSpec, publishable: list[Attempt], outcomes: Outcomes
) -> list[Attempt]:
    """Lock retained inputs; drop successors built on one that is no longer served."""
    own = {a.candidate.uid for a in publishable}
    retained = sorted(
        {u for a in publishable if a.successor for u in a.successor.inputs if u not in own}
    )
    locked = tx.run("store/lock_heads", keys=[artifact_key(spec.ns, u) for u in retained])
    served = {row["uid"] for row in locked if row["live"]}
    gone = {u for u in retained if u not in served}
    if not gone:
        return publishable
    kept: list[Attempt] = []
    dropped: set[str] = set()
    for attempt in publishable:  # topological: a dependent comes after what it requires
        inputs = set(attempt.successor.inputs) if attempt.successor else set()
        lost = sorted(inputs & (gone | dropped))
        if lost:
            dropped.add(attempt.candidate.uid)
            outcomes.add("input_withdrawn", attempt.candidate.uid,
                         f"support {lost} was withdrawn by an overlapping event")
        else:
            kept.append(attempt)
    return kept


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
                    "erase": False,
                }
            )
    if spec.type is EventType.DELETE:
        for uid, vid in family.root_vids.items():
            outcomes.add("root_deleted", uid)
            rows.append(
                {"vid": vid, "outcome": "root_deleted", "detail": spec.reason, "remove": True,
                 "erase": True}
            )
    else:
        outcomes.sets["root_replaced"] = sorted(family.root_vids)
    return rows
