"""SPEC §2, the repair event e = (F, tau, Delta): its node, its phases, resumption, its report.

    created -> withdrawn -> candidates -> selected -> staged -> validated -> published
    (-> erased, for an event that erases: it completes only once no copy is left)

This module alone writes an event's phase. A step that commits its effect in one
transaction (the barrier, the selection record, publication) is handed `Event.commit`,
which records the phase inside that transaction, so a crash never leaves the recorded
phase ahead of the graph or behind it; steps whose re-run is harmless (staging reuses
what a crashed run staged, verdicts are keyed by version) are followed by
`Event.complete`. A re-run of the same event id (or `memorepair resume`) finds the node
and skips every step its phase says is done.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memorepair import faults, queries
from memorepair.codec import canonical_json
from memorepair.errors import EventStateError, InputError
from memorepair.interchange import parse_event
from memorepair.model import RepairEventSpec, event_key
from memorepair.store import Store, Tx

CREATE_EVENT = queries.named("events/create_event")
GET_EVENT = queries.named("events/get_event")
OPEN_EVENTS = queries.named("events/open_events")
RETRIES = queries.named("events/retries")
SET_PHASE = queries.named("events/set_phase")

PHASES = (
    "created",
    "withdrawn",
    "candidates",
    "selected",
    "staged",
    "validated",
    "published",
    "erased",  # erasing events only (delete, correct with erase): completes them
)

#: Fault injection for the crash tests: after this phase (or inner point: "recording",
#: "staging", "publishing") commits, the process marks a file and waits to be killed.
#: Never set it in production.
PAUSE_ENV = faults.PAUSE_ENV

#: Records one phase (and figures) inside the transaction that makes it true.
PhaseCommit = Callable[[Tx, Mapping[str, Any]], None]


#: Outcomes that leave an artifact withdrawn after a completed repair, for a reason a retry
#: may fix once the cause is (the CLI exits 5 on them).
STRANDED = ("failed", "blocked", "input_withdrawn")


@dataclass
class RepairReport:
    event: str
    type: str
    status: str
    selector: str
    lam: float
    withdrawn: int
    candidates: int
    executable: int
    selected: list[str]
    outcomes: dict[str, list[str]]
    objective: float
    repair_value: float
    cost: float
    repair_all_value: float
    repair_all_cost: float
    backend: str
    seconds: dict[str, float] = field(default_factory=dict)
    details: dict[str, str] = field(default_factory=dict)
    resumed_from: str | None = None
    #: Measured seconds of this run's builds and validations (the operators' work; what
    #: a resumed run reused from an interrupted one is not in it), and their CPU seconds
    #: (sandboxed jobs included): the same work, free of the machine's load.
    work_s: float = 0.0
    work_cpu_s: float = 0.0
    #: Transactions the driver ran again after a transient error (a deadlock between
    #: writers, say) while this run went on; each succeeded, or the run failed.
    retried: int = 0
    #: An erasing event's closing scan: `ok`, the `copies` left (where, which property)
    #: and what was `scanned`; while a copy is left the event stays open.
    erasure: dict[str, Any] | None = None

    @property
    def published(self) -> list[str]:
        return self.outcomes.get("published", [])

    @property
    def stranded(self) -> list[dict[str, str]]:
        """What the repair left withdrawn without repairing it, and why: until a `retry`
        (once the cause is fixed) or a new event, none of it is served."""
        return [
            {"uid": uid, "outcome": outcome, "detail": self.details.get(uid, "")}
            for outcome in STRANDED
            for uid in self.outcomes.get(outcome, [])
        ]

    def as_dict(self) -> dict[str, Any]:
        return {
            "event": self.event,
            "type": self.type,
            "status": self.status,
            "selector": self.selector,
            "lambda": self.lam,
            "withdrawn": self.withdrawn,
            "candidates": self.candidates,
            "executable": self.executable,
            "selected": self.selected,
            "outcomes": self.outcomes,
            "objective": self.objective,
            "repair_value": self.repair_value,
            "cost": self.cost,
            "repair_all_value": self.repair_all_value,
            "repair_all_cost": self.repair_all_cost,
            "normalised_cost": self.cost / self.repair_all_cost if self.repair_all_cost else 0.0,
            "backend": self.backend,
            "seconds": self.seconds,
            "work_s": self.work_s,
            "work_cpu_s": self.work_cpu_s,
            "details": self.details,
            "resumed_from": self.resumed_from,
            "retried_transactions": self.retried,
            "erasure": self.erasure,
        }


def digest(spec: RepairEventSpec) -> str:
    """What an event id stands for: re-using an id for another event is refused."""
    return hashlib.sha256(canonical_json(_spec_json(spec)).encode()).hexdigest()


def _spec_json(spec: RepairEventSpec) -> dict[str, Any]:
    return spec.model_dump(mode="json", by_alias=True)


def _stored_spec(spec: RepairEventSpec) -> dict[str, Any]:
    """The spec as the event node keeps it: no replacement text (that lives only in the
    replacement version, which an erasure can redact; the digest stands for the rest)."""
    data = _spec_json(spec)
    for replacement in data.get("replacements", []):
        replacement.update(content="", meta=None, recipe=None)
    return data


class Event:
    """One event's record and its phase state machine (see the module docstring)."""

    def __init__(
        self, store: Store, spec: RepairEventSpec, record: Mapping[str, Any], state_dir: Path
    ) -> None:
        self.store = store
        self.spec = spec
        self.key = event_key(spec.ns, spec.id)
        self.lam = float(record["lambda"])
        self.selector = str(record["selector"])
        self.phase = str(record["phase"])
        self.status = str(record["status"])
        self._state_dir = state_dir

    @property
    def completed(self) -> bool:
        return self.status == "completed"

    @property
    def cascade(self) -> bool:
        """Whether the barrier withdraws the cascade (the "none" baseline withdraws roots)."""
        return self.selector != "none"

    def reached(self, phase: str) -> bool:
        return PHASES.index(self.phase) >= PHASES.index(phase)

    def commit(self, phase: str, *, status: str = "open") -> PhaseCommit:
        """The phase record for a step's own transaction; the phase advances on commit."""

        def record(tx: Tx, figures: Mapping[str, Any]) -> None:
            tx.run(SET_PHASE, key=self.key, phase=phase, status=status, figures=dict(figures))
            tx.after_commit(lambda: self._advance(phase, status))

        return record

    def complete(self, phase: str, figures: Mapping[str, Any], *, status: str = "open") -> None:
        """Record a phase after a step whose re-run is harmless (unless already recorded)."""
        if not self.reached(phase) or self.status != status:
            self.store.transaction(lambda tx: self.commit(phase, status=status)(tx, figures))

    def note(self, figures: Mapping[str, Any]) -> None:
        """Record figures on the event without advancing its phase or status (an erasure
        that found copies it cannot reach stays open)."""
        phase, status = self.phase, self.status
        self.store.transaction(lambda tx: self.commit(phase, status=status)(tx, figures))

    def refuse(self, error: InputError) -> None:
        """The barrier refused the event before withdrawing anything: the id stays free."""
        self.store.write(
            SET_PHASE, key=self.key, phase="created", status="failed", figures={"error": str(error)}
        )

    def checkpoint(self, point: str) -> None:
        """Fault injection (see `PAUSE_ENV`): wait here to be killed, if asked to."""
        faults.pause_if_asked(self._state_dir, self.spec.id, point)

    def _advance(self, phase: str, status: str) -> None:
        self.phase, self.status = phase, status
        self.checkpoint(phase)


def open_event(
    store: Store,
    spec: RepairEventSpec,
    *,
    lam: float,
    selector: str,
    state_dir: Path,
    recorded: bool = False,
    by: str | None = None,
) -> tuple[Event, str | None]:
    """Create the event's node, or find it again; returns it and the phase it resumes from.

    A re-run keeps the lambda and selector the event was created with. An id already used
    for a different event is refused (unless the spec is the one the event recorded,
    `recorded`, which lacks replacement text); a refused event (nothing withdrawn) may
    run again. `by` is the principal that asked for it (kept from the first run).
    """
    created = store.write(
        CREATE_EVENT,
        key=event_key(spec.ns, spec.id),
        ns=spec.ns,
        id=spec.id,
        type=spec.type.value,
        roots=list(spec.roots),
        lam=lam,
        reason=spec.reason,
        spec=canonical_json(_stored_spec(spec)),
        digest=digest(spec),
        selector=selector,
        retry_of=spec.retry_of,
        by=by,
    )[0]
    record = dict(created["event"])
    if not recorded and record["digest"] != digest(spec):
        raise EventStateError(
            f"event id {spec.id!r} was already used for a different event in namespace "
            f"{spec.ns!r}; give this one a new id"
        )
    if record["status"] == "failed" and record["phase"] == "created":
        record["status"] = "open"
    resumed_from = None if created["created"] else str(record["phase"])
    return Event(store, spec, record, state_dir), resumed_from


def open_event_specs(store: Store, ns: str, event_id: str | None) -> list[RepairEventSpec]:
    """The events `resume` completes: the one named, else every open one, oldest first."""
    if event_id is not None:
        ids = [event_id]
    else:
        ids = [str(row["id"]) for row in store.read(OPEN_EVENTS, ns=ns)]
    return [recorded_spec(store, ns, i) for i in ids]


def open_events(store: Store, ns: str) -> list[dict[str, Any]]:
    """Events that have not completed (id, phase, status), oldest first."""
    return store.read(OPEN_EVENTS, ns=ns)


def retries(store: Store, ns: str, event_id: str) -> list[dict[str, Any]]:
    """The follow-up events that retried `event_id` (id, status, phase), oldest first."""
    return store.read(RETRIES, ns=ns, id=event_id)


def recorded_spec(store: Store, ns: str, event_id: str) -> RepairEventSpec:
    return parse_event(record(store, ns, event_id)["spec"], f"event {event_id} as recorded")


def record(store: Store, ns: str, event_id: str) -> dict[str, Any]:
    found = store.read(GET_EVENT, key=event_key(ns, event_id))
    if not found:
        raise InputError(
            f"no event {event_id!r} in namespace {ns!r} (see `memorepair audit events`)"
        )
    return dict(found[0]["event"])


def skipped(spec: RepairEventSpec, why: str) -> RepairReport:
    """The report of an event `resume` could not continue (it stays as it was)."""
    return RepairReport(
        event=spec.id,
        type=spec.type.value,
        status="skipped",
        selector="",
        lam=0.0,
        withdrawn=0,
        candidates=0,
        executable=0,
        selected=[],
        outcomes={},
        objective=0.0,
        repair_value=0.0,
        cost=0.0,
        repair_all_value=0.0,
        repair_all_cost=0.0,
        backend="",
        details={"error": why},
    )
