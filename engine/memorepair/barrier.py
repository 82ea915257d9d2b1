"""Steps 1 and 2: compute the cascade C(F) and withdraw all of it in one transaction.

The barrier transaction locks the roots, computes the reach over INFLUENCES, withdraws
it (which locks every node of it), and computes the reach again until nothing new
appears. A writer that derived a new artifact from a cascade node before the barrier
took that node's lock has committed by then, so the repeated reach sees its edge and
withdraws it too; a writer after that sees the node withdrawn (see `recording`). When
the transaction commits, no node of C(F) is served, and the event's phase says so.

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

import json
import time
from dataclasses import dataclass

from memorepair.codec import canonical_json
from memorepair.errors import CascadeBusyError, UnknownArtifactError, some
from memorepair.model import EventType, RepairEventSpec, artifact_key, version_id
from memorepair.store import Store, Tx


@dataclass(frozen=True)
class BarrierResult:
    withdrawn: int
    seconds: float
    rounds: int


def event_key(ns: str, event_id: str) -> str:
    return f"{ns}/{event_id}"


def withdraw(store: Store, spec: RepairEventSpec, *, cascade: bool = True) -> BarrierResult:
    """Withdraw C(F) (or only F, for the no-cascade baseline) atomically.

    Raises `UnknownArtifactError` (nothing withdrawn) for a missing or deleted root and
    `CascadeBusyError` when another open event holds part of the cascade; the caller may
    wait and retry (`withdraw_when_free`).
    """
    started = time.perf_counter()
    withdrawn, rounds = store.transaction(lambda tx: _barrier(tx, spec, cascade))
    return BarrierResult(withdrawn, time.perf_counter() - started, rounds)


def withdraw_when_free(
    store: Store, spec: RepairEventSpec, *, cascade: bool = True, wait_s: float | None = None
) -> BarrierResult:
    """`withdraw`, waiting (with backoff) while an overlapping event still holds nodes."""
    deadline = time.monotonic() + (store.settings.busy_wait_s if wait_s is None else wait_s)
    delay = 0.05
    while True:
        try:
            return withdraw(store, spec, cascade=cascade)
        except CascadeBusyError:
            if time.monotonic() + delay > deadline:
                raise
            time.sleep(delay)
            delay = min(delay * 2, 1.0)


def _barrier(tx: Tx, spec: RepairEventSpec, cascade: bool) -> tuple[int, int]:
    ns, key = spec.ns, event_key(spec.ns, spec.id)
    root_keys = [artifact_key(ns, uid) for uid in spec.roots]
    roots = {row["key"]: row for row in tx.run("store/lock_heads", keys=root_keys)}
    missing = [uid for uid, k in zip(spec.roots, root_keys, strict=True) if k not in roots]
    deleted = [roots[k]["uid"] for k in root_keys if k in roots and roots[k]["removed"]]
    if missing or deleted:
        raise UnknownArtifactError(
            f"event {spec.id!r}: {some(missing, 'unknown root')} in namespace {ns!r}"
            if missing
            else f"event {spec.id!r}: {some(deleted, 'root')} already deleted"
        )
    rounds = 0
    while True:
        rounds += 1
        if cascade:
            (result,) = tx.run(
                "barrier/withdraw_cascade", event_key=key, keys=root_keys, first=rounds == 1
            )
            _refuse_if_unheld(tx, spec, int(result["unrecorded"]))
        else:
            (result,) = tx.run("barrier/withdraw_roots", event_key=key, keys=root_keys)
        _refuse_if_busy(tx, spec, result["holders"])
        withdrawn = int(result["withdrawn"])
        if not cascade:
            break
        (check,) = tx.run("barrier/count_unwithdrawn", event_key=key, keys=root_keys)
        if check["unwithdrawn"] == 0:
            break
    if cascade:
        tx.run("barrier/link_roots", event_key=key, keys=root_keys)
    if spec.type is not EventType.DELETE:
        _replace_roots(tx, spec, roots)
    tx.run(
        "events/set_phase",
        key=key,
        phase="withdrawn",
        status="open",
        figures={"withdrawn": withdrawn, "barrier_rounds": rounds},
    )
    return withdrawn, rounds


def _refuse_if_busy(tx: Tx, spec: RepairEventSpec, holders: list[str]) -> None:
    """Refuse (rolling the barrier back) if another open event holds part of the cascade."""
    if not holders:
        return
    busy = tx.run("barrier/open_holders", keys=sorted(holders), ns=spec.ns)
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
    pending = tx.run("barrier/unheld_events", event_key=event_key(spec.ns, spec.id), ns=spec.ns)
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
            tx.run("barrier/hold_cascade", event_key=key)
            (check,) = tx.run("barrier/count_unheld", event_key=key)
            if check["unheld"] == 0:
                break
        tx.run("barrier/mark_held", event_key=key)

    store.transaction(work)


def _replace_roots(tx: Tx, spec: RepairEventSpec, roots: dict[str, dict[str, object]]) -> None:
    ns = spec.ns
    keys = [artifact_key(ns, uid) for uid in spec.roots]
    latest = {
        row["key"]: int(row["version"]) for row in tx.run("execution/max_versions", keys=keys)
    }
    rows = []
    for uid in spec.roots:
        k = artifact_key(ns, uid)
        version = latest[k] + 1
        if spec.type is EventType.CORRECT:
            replacement = next(r for r in spec.replacements if r.replaces == uid)
            content = replacement.content
            meta = canonical_json(replacement.meta)
            recipe = canonical_json(replacement.recipe.model_dump() if replacement.recipe else None)
        else:
            assert spec.interface is not None  # the model guarantees it for migrate
            interface = spec.interface.model_dump()
            content = json.dumps(interface, sort_keys=True)
            meta = canonical_json({"tool": spec.interface.tool, "interface": interface})
            recipe = None
        rows.append(
            {
                "old_vid": version_id(ns, uid, int(str(roots[k]["version"]))),
                "vid": version_id(ns, uid, version),
                "key": k,
                "version": version,
                "content": content,
                "meta": meta,
                "recipe": recipe,
            }
        )
    tx.run("barrier/replace_roots", event_key=event_key(ns, spec.id), rows=rows)
