"""The audit trail, read back with the same Cypher an auditor pastes into Browser.

Every function here runs files of `cypher/audit/` unchanged; the CLI and the Python API
only format what those queries return. An event's report (`report_of`) is rebuilt from
the same trail, so a report never says more than an auditor can check.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
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
EXPOSURE = queries.named("audit/exposure")


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


def exposure(store: Store, ns: str, event_id: str) -> dict[str, Any]:
    """Who was served the versions an event withdrew, before its barrier took them out.

    For every withdrawn version that was read: each principal and session, its reads,
    and the first and last read's time, most read first; and per principal the totals.
    The match is by version, not by time: a withdrawn version is never served again, so
    a record of it is a read from before the barrier whatever the clocks say (the times
    are the reading process's, recorded when the read returned).
    """
    event = record(store, ns, event_id)  # an unknown event is an error
    rows = [_exposure_row(row) for row in store.read(EXPOSURE, ns=ns, event=event_id)]
    versions = {(r["uid"], r["version"]) for r in rows}
    return {
        "event": event_id,
        "type": event.get("type"),
        "by": event.get("by"),
        "created_at": event.get("created_at"),
        "barrier_at": _text_time(event.get("withdrawn_at")),
        "withdrawn": int(event.get("withdrawn") or 0),
        "exposed_versions": len(versions),
        "reads": sum(r["reads"] for r in rows),
        "principals": _by_principal(rows),
        "exposures": rows,
    }


def _exposure_row(row: Mapping[str, Any]) -> dict[str, Any]:
    return {
        **{k: row[k] for k in ("uid", "version", "outcome", "root", "published_at")},
        "principal": row["principal"],
        "session": row["session"],
        "reads": int(row["reads"]),
        "first_at": _epoch_text(row["first_at"]),
        "last_at": _epoch_text(row["last_at"]),
    }


def _by_principal(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Per principal: reads, distinct versions and sessions, first and last read."""
    totals: dict[str, dict[str, Any]] = {}
    for row in rows:
        entry = totals.setdefault(
            row["principal"],
            {"reads": 0, "versions": set(), "sessions": set(), "first_at": None, "last_at": None},
        )
        entry["reads"] += row["reads"]
        entry["versions"].add(f"{row['uid']}@{row['version']}")
        entry["sessions"].add(row["session"])
        entry["first_at"] = min(filter(None, (entry["first_at"], row["first_at"])))
        entry["last_at"] = max(filter(None, (entry["last_at"], row["last_at"])))
    summary = [
        {
            "principal": name,
            "reads": entry["reads"],
            "versions": sorted(entry["versions"]),
            "sessions": sorted(s or "" for s in entry["sessions"]),
            "first_at": entry["first_at"],
            "last_at": entry["last_at"],
        }
        for name, entry in totals.items()
    ]
    return sorted(summary, key=lambda e: (-e["reads"], e["principal"]))


def _epoch_text(seconds: float | None) -> str | None:
    if seconds is None:
        return None
    return datetime.fromtimestamp(float(seconds), UTC).isoformat(timespec="milliseconds")


def _text_time(value: Any) -> str | None:
    """A Neo4j DateTime (or None) as ISO 8601 text."""
    if value is None:
        return None
    native = value.to_native() if hasattr(value, "to_native") else value
    return native.isoformat() if isinstance(native, datetime) else str(native)
