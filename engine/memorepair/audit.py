"""Step 6: the audit trail, read back with the same Cypher an auditor pastes into Browser.

Every function here runs one file of `cypher/audit/` unchanged; the CLI and the Python API
only format what those queries return.
"""

from __future__ import annotations

from typing import Any

from memorepair import erasure as erasure_step
from memorepair import queries
from memorepair.errors import InputError
from memorepair.fingerprints import Matcher
from memorepair.store import Store

EVENTS = queries.named("audit/events")
EVENT_CASCADE = queries.named("audit/event_cascade")
EVENT_SETS = queries.named("audit/event_sets")
GET_EVENT = queries.named("events/get_event")
LINEAGE = queries.named("audit/lineage")
STALE_SERVED = queries.named("audit/stale_served")
STILL_WITHDRAWN = queries.named("audit/still_withdrawn")
ERASURE = queries.named("audit/erasure")


def events(store: Store, ns: str) -> list[dict[str, Any]]:
    return store.read(EVENTS, ns=ns)


def event_sets(store: Store, ns: str, event_id: str) -> dict[str, list[dict[str, Any]]]:
    """One event's withdrawn cascade by outcome (published, removed, failed, ...)."""
    if not store.read(GET_EVENT, key=f"{ns}/{event_id}"):
        raise InputError(
            f"no event {event_id!r} in namespace {ns!r} (see `memorepair audit events`)"
        )
    rows = store.read(EVENT_SETS, ns=ns, event=event_id)
    return {row["outcome"]: sorted(row["artifacts"], key=lambda a: a["uid"]) for row in rows}


def event_cascade(
    store: Store, ns: str, event_id: str
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """One event's record and its withdrawn cascade as a graph (`memorepair show`)."""
    found = store.read(GET_EVENT, key=f"{ns}/{event_id}")
    if not found:
        raise InputError(
            f"no event {event_id!r} in namespace {ns!r} (see `memorepair audit events`)"
        )
    return dict(found[0]["event"]), store.read(EVENT_CASCADE, ns=ns, event=event_id)


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
