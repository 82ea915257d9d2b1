"""Step 6: the audit trail, read back with the same Cypher an auditor pastes into Browser.

Every function here runs one file of `cypher/audit/` unchanged; the CLI and the Python API
only format what those queries return.
"""

from __future__ import annotations

from typing import Any

from memorepair.errors import InputError
from memorepair.store import Store


def events(store: Store, ns: str) -> list[dict[str, Any]]:
    return store.read("audit/events", ns=ns)


def event_sets(store: Store, ns: str, event_id: str) -> dict[str, list[dict[str, Any]]]:
    """One event's withdrawn cascade by outcome (published, removed, failed, ...)."""
    if not store.read("events/get_event", key=f"{ns}/{event_id}"):
        raise InputError(f"no event {event_id!r} in namespace {ns!r} (see `memorepair audit events`)")
    rows = store.read("audit/event_sets", ns=ns, event=event_id)
    return {row["outcome"]: sorted(row["artifacts"], key=lambda a: a["uid"]) for row in rows}


def lineage(store: Store, ns: str, uid: str) -> list[dict[str, Any]]:
    rows = store.read("audit/lineage", ns=ns, uid=uid)
    if not rows:
        raise InputError(f"no artifact {uid!r} in namespace {ns!r}")
    return rows


def still_withdrawn(store: Store, ns: str) -> list[dict[str, Any]]:
    return store.read("audit/still_withdrawn", ns=ns)


def stale_served(store: Store, ns: str) -> list[dict[str, Any]]:
    """Live artifacts whose support is not live: the barrier invariant says none, ever."""
    return store.read("audit/stale_served", ns=ns)
