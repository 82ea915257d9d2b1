"""The audit trail, read back with the same Cypher an auditor pastes into Browser.

Every function here runs files of `cypher/audit/` unchanged; the CLI and the Python API
only format what those queries return. An event's report (`report_of`) is rebuilt from
the same trail, so a report never says more than an auditor can check.
"""

from __future__ import annotations

from typing import Any

from memorepair import erasure as erasure_step
from memorepair import queries
from memorepair.errors import InputError
from memorepair.events import RepairReport, record
from memorepair.fingerprints import Matcher
from memorepair.store import Store

EVENTS = queries.named("audit/events")
EVENT_CASCADE = queries.named("audit/event_cascade")
EVENT_SETS = queries.named("audit/event_sets")
EVENT_SELECTED = queries.named("audit/event_selected")
LINEAGE = queries.named("audit/lineage")
STALE_SERVED = queries.named("audit/stale_served")
STILL_WITHDRAWN = queries.named("audit/still_withdrawn")
ERASURE = queries.named("audit/erasure")


def events(store: Store, ns: str) -> list[dict[str, Any]]:
    return store.read(EVENTS, ns=ns)


def event_sets(store: Store, ns: str, event_id: str) -> dict[str, list[dict[str, Any]]]:
    """One event's withdrawn cascade by outcome (published, removed, failed, ...)."""
    record(store, ns, event_id)  # an unknown event is an error, not an empty answer
    rows = store.read(EVENT_SETS, ns=ns, event=event_id)
    return {row["outcome"]: sorted(row["artifacts"], key=lambda a: a["uid"]) for row in rows}


def event_cascade(
    store: Store, ns: str, event_id: str
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """One event's record and its withdrawn cascade as a graph (`memorepair show`)."""
    return record(store, ns, event_id), store.read(EVENT_CASCADE, ns=ns, event=event_id)


def report_of(
    store: Store, ns: str, event_id: str, resumed_from: str | None = None
) -> RepairReport:
    """Rebuild an event's report from the graph (the audit trail is the truth)."""
    event = record(store, ns, event_id)
    rows = store.read(EVENT_SETS, ns=ns, event=event_id)
    outcomes = {row["outcome"]: sorted(a["uid"] for a in row["artifacts"]) for row in rows}
    details = {a["uid"]: a["reason"] for row in rows for a in row["artifacts"] if a.get("reason")}
    selected = sorted(store.read(EVENT_SELECTED, ns=ns, event=event_id)[0]["uids"])
    return RepairReport(
        event=event_id,
        type=event["type"],
        status=event["status"],
        selector=event.get("selector", ""),
        lam=float(event["lambda"]),
        withdrawn=int(event.get("withdrawn", 0)),
        candidates=int(event.get("candidates", 0)),
        executable=0,
        selected=selected,
        outcomes=outcomes,
        objective=float(event.get("objective", 0.0)),
        repair_value=float(event.get("repair_value", 0.0)),
        cost=float(event.get("cost", 0.0)),
        repair_all_value=float(event.get("repair_all_value", 0.0)),
        repair_all_cost=float(event.get("repair_all_cost", 0.0)),
        backend=str(event.get("backend", "")),
        details=details,
        resumed_from=resumed_from,
    )


def lineage(store: Store, ns: str, uid: str) -> list[dict[str, Any]]:
    rows = store.read(LINEAGE, ns=ns, uid=uid)
    if not rows:
        raise InputError(f"no artifact {uid!r} in namespace {ns!r}")
    return rows


def still_withdrawn(store: Store, ns: str) -> list[dict[str, Any]]:
    return store.read(STILL_WITHDRAWN, ns=ns)


def stale_served(store: Store, ns: str) -> list[dict[str, Any]]:
    """Live artifacts whose support is not live: the barrier invariant says none, ever."""
    return store.read(STALE_SERVED, ns=ns)


def erasure(store: Store, ns: str, event_id: str) -> dict[str, Any]:
    """An erasure record, and its proof: every property of every node and relationship
    in the namespace scanned for the erased text's fingerprints (none may match)."""
    rows = store.read(ERASURE, ns=ns, event=event_id)
    if not rows:
        raise InputError(
            f"no event {event_id!r} in namespace {ns!r} (see `memorepair audit events`)"
        )
    record = dict(rows[0])
    prints = record.pop("fingerprints")
    if prints is None:
        raise InputError(
            f"event {event_id!r} erased nothing: only a delete (or a correct with erase: true) "
            "erases, once its repair completes (`memorepair resume` finishes it)"
        )
    copies, scanned = erasure_step.scan(store, ns, Matcher.of(prints))
    return {
        **record,
        "fingerprints": len(prints),
        "scanned": scanned,
        "copies": copies,
        "ok": not copies,
    }
