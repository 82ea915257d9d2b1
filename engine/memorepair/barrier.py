"""SPEC §3, the barrier: withdraw the whole cascade C(F) (§2) in one transaction.

The barrier transaction first takes every stripe of the namespace's publication lock (a
repair's batch being written commits first, and none starts until the barrier commits:
`publication`), then locks the roots, computes the reach over INFLUENCES, withdraws it
(which locks every node of it), and computes the reach again until nothing new appears.
A writer that derived a new artifact from a cascade node before the barrier took that
node's lock has committed by then, so the repeated reach sees its edge and withdraws it
too; a writer after that sees the node withdrawn (see `recording`). When the transaction
commits, no node of C(F) is served, and the event's phase says so.

It writes only what stops serving: `Live` comes off every node of C(F) (and the roots
get their holder and WITHDREW edges). Each further write per node costs about as much
again on large cascades, so the holder record follows in its own transaction, `hold`,
right after the commit: `Withdrawn` and `held_by` on every withdrawn node (and on late
arrivals derived from them meanwhile). Until `hold` commits, the nodes are not served and
name no holder; another barrier reaching them refuses, as it does for an open holder.
The descendants' WITHDREW audit edges are written with their candidate facts, before
anything is built (`repair`).

Roots of a `correct` (or `migrate`) event are superseded in the same transaction by
their replacement X_delta (or by the new interface kappa_e), which is fresh support and
served at once.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from memorepair import queries, replacement
from memorepair.embedding import Indexing
from memorepair.errors import CascadeBusyError, UnknownArtifactError, some
from memorepair.events import PhaseCommit
from memorepair.model import (
    EventType,
    RepairEventSpec,
    artifact_key,
    event_key,
    publish_lock_keys,
)
from memorepair.store import LOCK_HEADS, Store, Tx

COUNT_UNHELD = queries.named("barrier/count_unheld")
COUNT_UNWITHDRAWN = queries.named("barrier/count_unwithdrawn")
HOLD_CASCADE = queries.named("barrier/hold_cascade")
LINK_ROOTS = queries.named("barrier/link_roots")
LOCK_PUBLISHERS = queries.named("barrier/lock_publishers")
MARK_HELD = queries.named("barrier/mark_held")
OPEN_HOLDERS = queries.named("barrier/open_holders")
UNHELD_EVENTS = queries.named("barrier/unheld_events")
WITHDRAW_CASCADE = queries.named("barrier/withdraw_cascade")
WITHDRAW_ROOTS = queries.named("barrier/withdraw_roots")
WITHDRAW_STRANDED = queries.named("barrier/withdraw_stranded")


@dataclass(frozen=True)
class BarrierResult:
    withdrawn: int
    seconds: float
    rounds: int


def withdraw(
    store: Store, spec: RepairEventSpec, *, cascade: bool, commit: PhaseCommit, indexing: Indexing
) -> BarrierResult:
    """Withdraw C(F) (or only F, for the no-cascade baseline) atomically.

    `commit` records the withdrawn phase in the same transaction. Raises
    `UnknownArtifactError` (nothing withdrawn) for a missing or deleted root and
    `CascadeBusyError` when another open event holds part of the cascade; the caller may
    wait and retry (`withdraw_when_free`).
    """
    started = time.perf_counter()
    search = replacement.search_fields(indexing, spec)  # embedded before the barrier
    withdrawn, rounds = store.transaction(lambda tx: _barrier(tx, spec, cascade, commit, search))
    return BarrierResult(withdrawn, time.perf_counter() - started, rounds)


def withdraw_when_free(
    store: Store,
    spec: RepairEventSpec,
    *,
    cascade: bool,
    commit: PhaseCommit,
    wait_s: float,
    indexing: Indexing,
) -> BarrierResult:
    """`withdraw`, waiting (with backoff) up to `wait_s` while an overlapping event still
    holds nodes (MEMOREPAIR_BUSY_WAIT_S)."""
    deadline = time.monotonic() + wait_s
    delay = 0.05
    while True:
        try:
            return withdraw(store, spec, cascade=cascade, commit=commit, indexing=indexing)
        except CascadeBusyError:
            if time.monotonic() + delay > deadline:
                raise
            time.sleep(delay)
            delay = min(delay * 2, 1.0)


def _barrier(
    tx: Tx,
    spec: RepairEventSpec,
    cascade: bool,
    commit: PhaseCommit,
    search: dict[str, dict[str, Any]],
) -> tuple[int, int]:
    key = event_key(spec.ns, spec.id)
    root_keys = [artifact_key(spec.ns, uid) for uid in spec.roots]
    tx.run(
        LOCK_PUBLISHERS, keys=publish_lock_keys(spec.ns), ns=spec.ns
    )  # repairs' batches end first
    if spec.retry_of is not None:  # a retry takes over what its event left stranded
        (result,) = tx.run(WITHDRAW_STRANDED, event_key=key, of=event_key(spec.ns, spec.retry_of))
        commit(tx, {"withdrawn": int(result["withdrawn"]), "barrier_rounds": 1})
        return int(result["withdrawn"]), 1
    roots = _lock_roots(tx, spec, root_keys)
    lineage = replacement.lock_inputs(tx, spec, roots)
    if cascade:
        withdrawn, rounds = _withdraw_cascade(tx, spec, key, root_keys)
        tx.run(LINK_ROOTS, event_key=key, keys=root_keys)
    else:
        (result,) = tx.run(WITHDRAW_ROOTS, event_key=key, keys=root_keys)
        _refuse_if_busy(tx, spec, result["holders"])
        withdrawn, rounds = int(result["withdrawn"]), 1
    if spec.type is not EventType.DELETE:
        replacement.check_still_served(tx, spec, lineage)
        replacement.replace(tx, spec, roots, lineage, search)
    commit(tx, {"withdrawn": withdrawn, "barrier_rounds": rounds})
    return withdrawn, rounds


def _lock_roots(
    tx: Tx, spec: RepairEventSpec, root_keys: list[str]
) -> dict[str, dict[str, object]]:
    """Lock the roots' current versions; refuse unknown or already deleted ones."""
    roots = {row["key"]: row for row in tx.run(LOCK_HEADS, keys=root_keys)}
    missing = [uid for uid, k in zip(spec.roots, root_keys, strict=True) if k not in roots]
    deleted = [roots[k]["uid"] for k in root_keys if k in roots and roots[k]["removed"]]
    if missing or deleted:
        raise UnknownArtifactError(
            f"event {spec.id!r}: {some(missing, 'unknown root')} in namespace {spec.ns!r}"
            if missing
            else f"event {spec.id!r}: {some(deleted, 'root')} already deleted"
        )
    return roots


def _withdraw_cascade(
    tx: Tx, spec: RepairEventSpec, key: str, root_keys: list[str]
) -> tuple[int, int]:
    """Reach and withdraw until a reach finds nothing new (writers that committed before
    the barrier locked their input are caught by the next round)."""
    rounds = 0
    while True:
        rounds += 1
        (result,) = tx.run(WITHDRAW_CASCADE, event_key=key, keys=root_keys, first=rounds == 1)
        _refuse_if_unheld(tx, spec, int(result["unrecorded"]))
        _refuse_if_busy(tx, spec, result["holders"])
        (check,) = tx.run(COUNT_UNWITHDRAWN, event_key=key, keys=root_keys)
        if check["unwithdrawn"] == 0:
            return int(result["withdrawn"]), rounds


def _refuse_if_busy(tx: Tx, spec: RepairEventSpec, holders: list[str]) -> None:
    """Refuse (rolling the barrier back) if another open event holds part of the cascade."""
    if not holders:
        return
    busy = tx.run(OPEN_HOLDERS, keys=sorted(holders), ns=spec.ns)
    if busy:
        names = some((f"{row['id']} ({row['status']})" for row in busy), "event")
        raise CascadeBusyError(
            f"event {spec.id!r}: its cascade overlaps open events: {names}; it runs once they "
            "complete (`memorepair resume` finishes an interrupted one)"
        )


def _refuse_if_unheld(tx: Tx, spec: RepairEventSpec, unrecorded: int) -> None:
    """Refuse if the cascade reaches nodes another event withdrew but has not held yet."""
    if not unrecorded:
        return
    pending = tx.run(UNHELD_EVENTS, event_key=event_key(spec.ns, spec.id), ns=spec.ns)
    names = (
        some((f"{row['id']} ({row['status']})" for row in pending), "event")
        if pending
        else "none open"
    )
    raise CascadeBusyError(
        f"event {spec.id!r}: its cascade reaches {unrecorded} node(s) that another event "
        f"has just withdrawn and not yet recorded as held (events between barrier and "
        f"hold: {names}); it runs once they are held and that event completes "
        "(`memorepair resume` finishes an interrupted one)"
    )


def hold(store: Store, spec: RepairEventSpec) -> None:
    """Record the event as the holder of what its barrier withdrew (idempotent).

    Runs right after the barrier commits and first thing on every resume. A writer that
    read a withdrawn node before this transaction locked it has committed a late arrival
    by the time the check runs, and the next round holds it too.
    """
    key = event_key(spec.ns, spec.id)

    def work(tx: Tx) -> None:
        while True:
            tx.run(HOLD_CASCADE, event_key=key)
            (check,) = tx.run(COUNT_UNHELD, event_key=key)
            if check["unheld"] == 0:
                break
        tx.run(MARK_HELD, event_key=key)

    store.transaction(work)
