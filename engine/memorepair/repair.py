"""The repair of one event, phase by phase, resumable after a crash at any point.

    created -> withdrawn -> candidates -> selected -> staged -> validated -> published

Each phase is recorded on the event node in the same transaction as its effect (or
after it, when re-running the phase is harmless), so `resume` picks up from the last
recorded phase: the barrier is never lifted by a crash, staged successors of a crashed
run are reused (keyed by version id), and successors an interrupted publication already
swapped in are skipped, so nothing is published twice.
"""

from __future__ import annotations

import gc
import hashlib
import json
import math
import os
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from memorepair import queries, selection
from memorepair.barrier import event_key, hold, withdraw_when_free
from memorepair.candidates import Candidate, CandidateFamily, CascadeNode, build_candidates
from memorepair.errors import EventStateError, InputError
from memorepair.execution import Registry, stage, validate
from memorepair.interchange import parse_event
from memorepair.model import (
    Arch,
    Artifact,
    Kind,
    Mode,
    Recipe,
    RepairEventSpec,
    Visibility,
    artifact_key,
)
from memorepair.publication import Outcomes, publish
from memorepair.store import Store

CASCADE_NODES = queries.named("candidates/cascade_nodes")
CREATE_EVENT = queries.named("events/create_event")
EVENT_SELECTED = queries.named("audit/event_selected")
EVENT_SETS = queries.named("audit/event_sets")
GET_EVENT = queries.named("events/get_event")
OPEN_EVENTS = queries.named("events/open_events")
PLAN_CASCADE = queries.named("candidates/plan_cascade")
RECORD_CANDIDATES = queries.named("events/record_candidates")
SERVED_INPUTS = queries.named("candidates/served_inputs")
SET_PHASE = queries.named("events/set_phase")

Selector = Literal["mincut", "greedy", "all", "none"]
PHASES = ("created", "withdrawn", "candidates", "selected", "staged", "validated", "published")
Progress = Callable[[str, int, int], None]

#: Fault injection for the crash tests: after recording this phase the process marks a
#: file and waits to be killed. Never set it in production.
PAUSE_ENV = "MEMOREPAIR_FAULT_PAUSE_AFTER"


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

    @property
    def published(self) -> list[str]:
        return self.outcomes.get("published", [])

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
            "details": self.details,
            "resumed_from": self.resumed_from,
        }


@dataclass(frozen=True)
class Plan:
    """A dry run: what `repair` would withdraw, repair and remove. Changes nothing."""

    spec: RepairEventSpec
    cascade: list[str]
    family: CandidateFamily
    selected: list[int]
    result: selection.Selection
    repair_all: selection.Selection

    def as_dict(self) -> dict[str, Any]:
        chosen = set(self.selected)
        return {
            "event": self.spec.id,
            "type": self.spec.type.value,
            "roots": list(self.spec.roots),
            "cascade": self.cascade,
            "candidates": [
                {
                    "uid": c.uid,
                    "mode": c.mode.value,
                    "executable": c.executable,
                    "value": c.value,
                    "cost": c.cost,
                    "requires": list(c.requires),
                    "selected": c.index in chosen,
                    "reason": c.reason,
                }
                for c in self.family.candidates
            ],
            "objective": self.result.objective,
            "repair_value": self.result.repair,
            "cost": self.result.cost,
            "backend": self.result.backend,
            "repair_all_cost": self.repair_all.cost,
            "repair_all_value": self.repair_all.repair,
        }


@contextmanager
def _gc_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector for one plan or repair.

    A large cascade allocates millions of small, long-lived objects (rows, artifacts,
    candidates); each full collection walks all of them, which took about a fifth of a
    100k-node repair. Reference counting still frees everything acyclic at once; cycles
    are collected when the collector resumes.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def digest(spec: RepairEventSpec) -> str:
    canonical = json.dumps(spec.model_dump(mode="json", by_alias=True), sort_keys=True)
    return hashlib.sha256(canonical.encode()).hexdigest()


def _family(
    store: Store, registry: Registry, spec: RepairEventSpec, rows: Sequence[Mapping[str, Any]]
) -> CandidateFamily:
    nodes = [
        CascadeNode(
            vid=r["vid"],
            uid=r["uid"],
            version=r["version"],
            kind=Kind(r["kind"]),
            arch=Arch(r["arch"]) if r["arch"] else None,
            value=r["value"],
            repair_cost=r["repair_cost"],
            recipe=Recipe.model_validate(json.loads(r["recipe"])) if r["recipe"] else None,
            inputs=tuple(r["inputs"] or ()),
            root=bool(r["root"]),
        )
        for r in rows
    ]
    inside = {n.uid for n in nodes}
    outside = sorted({u for n in nodes for u in n.inputs if u not in inside})
    live: set[str] = set()
    size = store.settings.batch_size
    for start in range(0, len(outside), size):
        keys = [artifact_key(spec.ns, u) for u in outside[start : start + size]]
        live.update(store.read(SERVED_INPUTS, keys=keys)[0]["live"])
    served = {u: u in live for u in outside}

    def available(mode: Mode, node: CascadeNode) -> bool:
        skeleton = Artifact(
            uid=node.uid,
            version=node.version,
            ns=spec.ns,
            kind=node.kind,
            arch=node.arch,
            content="",
            recipe=node.recipe,
            visibility=Visibility.WITHDRAWN,
            inputs=list(node.inputs),
        )
        return registry.operator(mode, skeleton) is not None

    settings = store.settings
    return build_candidates(
        nodes,
        spec.type,
        served,
        default_value=settings.default_value,
        default_cost=settings.default_cost,
        operator_available=available,
    )


def selection_problem(
    family: CandidateFamily, weight: Callable[[Candidate], float] | None = None
) -> tuple[selection.SelectionProblem, list[int]]:
    """The selection problem over D+ (index map back to family indices).

    ``weight`` replaces the candidates' values: the BFCL bench weighs candidates by what
    Repair-all published to bound every selection's recovery (``bench/bfcl/bound.py``).
    """
    repairable = family.repairable
    position = {c.index: k for k, c in enumerate(repairable)}
    requires = [
        (position[j], position[i])
        for j, i in family.requirement_edges
        if j in position and i in position
    ]
    problem = selection.SelectionProblem(
        weights=[weight(c) if weight else c.value for c in repairable],
        costs=[c.cost for c in repairable],
        executable=[c.executable for c in repairable],
        requires=requires,
    )
    return problem, [c.index for c in repairable]


def select(
    family: CandidateFamily, lam: float, selector: Selector, *, backend: str, threshold: int
) -> tuple[selection.Selection, list[int], selection.Selection]:
    problem, back = selection_problem(family)
    if selector == "mincut":
        result = selection.select_mincut(problem, lam, backend=backend, threshold=threshold)
    elif selector == "greedy":
        result = selection.select_greedy(problem, lam)
    elif selector == "all":
        result = selection.select_all(problem, lam)
    else:  # "none": the no-cascade-repair baseline selects nothing
        result = selection.Selection(
            selected=tuple(False for _ in back),
            objective=0.0,
            repair=0.0,
            cost=0.0,
            backend="none",
        )
    repair_all = selection.select_all(problem, lam)
    chosen = [back[k] for k, x in enumerate(result.selected) if x]
    return result, chosen, repair_all


def checked_lam(lam: float | None) -> float | None:
    """A lambda override is checked like an event file's, before anything is recorded."""
    if lam is not None and (not math.isfinite(lam) or lam < 0 or lam > 1e9):
        raise InputError(f"lambda must be a finite number in [0, 1e9], got {lam!r}")
    return lam


def plan(
    store: Store,
    registry: Registry,
    spec: RepairEventSpec,
    *,
    lam: float | None = None,
    selector: Selector | None = None,
) -> Plan:
    with _gc_paused():
        return _plan(store, registry, spec, lam=lam, selector=selector)


def _plan(
    store: Store,
    registry: Registry,
    spec: RepairEventSpec,
    *,
    lam: float | None,
    selector: Selector | None,
) -> Plan:
    lam = checked_lam(lam)
    keys = [artifact_key(spec.ns, u) for u in spec.roots]
    rows = store.read(PLAN_CASCADE, keys=keys)[0]["rows"]
    found = {r["uid"] for r in rows if r["root"]}
    missing = [u for u in spec.roots if u not in found]
    if missing:
        raise InputError(f"event {spec.id!r}: unknown or deleted roots {missing}")
    family = _family(store, registry, spec, rows)
    settings = store.settings
    result, chosen, repair_all = select(
        family,
        lam if lam is not None else (spec.lam if spec.lam is not None else settings.lam),
        selector or settings.selector,
        backend=settings.solver,
        threshold=settings.solver_threshold,
    )
    return Plan(spec, sorted(r["uid"] for r in rows), family, chosen, result, repair_all)


def run(
    store: Store,
    registry: Registry,
    spec: RepairEventSpec,
    *,
    selector: Selector | None = None,
    lam: float | None = None,
    progress: Progress = lambda phase, done, total: None,
    options: Mapping[str, Any] | None = None,
) -> RepairReport:
    """Run (or resume) one repair event to completion. Idempotent by event id."""
    store.require_schema()
    with _gc_paused():
        return _run(
            store, registry, spec, selector=selector, lam=lam, progress=progress, options=options
        )


def _run(
    store: Store,
    registry: Registry,
    spec: RepairEventSpec,
    *,
    selector: Selector | None,
    lam: float | None,
    progress: Progress,
    options: Mapping[str, Any] | None,
) -> RepairReport:
    lam = checked_lam(lam)
    settings = store.settings
    chosen_selector: Selector = selector or settings.selector
    chosen_lam = lam if lam is not None else (spec.lam if spec.lam is not None else settings.lam)
    key = event_key(spec.ns, spec.id)
    seconds: dict[str, float] = {}
    created = store.write(
        CREATE_EVENT,
        key=key,
        ns=spec.ns,
        id=spec.id,
        type=spec.type.value,
        roots=list(spec.roots),
        lam=chosen_lam,
        reason=spec.reason,
        spec=json.dumps(spec.model_dump(mode="json", by_alias=True), sort_keys=True),
        digest=digest(spec),
        selector=chosen_selector,
    )[0]
    event = created["event"]
    if event["digest"] != digest(spec):
        raise EventStateError(
            f"event id {spec.id!r} was already used for a different event in namespace "
            f"{spec.ns!r}; give this one a new id"
        )
    if event["status"] == "failed" and event["phase"] == "created":
        event = {**event, "status": "open"}  # a refused event never withdrew anything
    resumed_from = None if created["created"] else event["phase"]
    if event["status"] == "completed":
        return report_of(store, spec.ns, spec.id, resumed_from="published")
    chosen_lam = float(event["lambda"])
    chosen_selector = event["selector"]
    phase = event["phase"]
    cascade = chosen_selector != "none"

    def reached(name: str) -> bool:
        return PHASES.index(phase) >= PHASES.index(name)

    def mark(name: str, figures: Mapping[str, Any] | None = None) -> None:
        nonlocal phase
        store.write(SET_PHASE, key=key, phase=name, status="open", figures=dict(figures or {}))
        phase = name
        _pause_if_asked(settings.state_dir, spec.id, name)

    clock = time.perf_counter()
    if not reached("withdrawn"):
        progress("barrier", 0, 1)
        try:
            withdraw_when_free(store, spec, cascade=cascade)
        except InputError as exc:  # nothing was withdrawn; the id may be used again
            store.write(
                SET_PHASE,
                key=key,
                phase="created",
                status="failed",
                figures={"error": str(exc)},
            )
            raise
        phase = "withdrawn"
        progress("barrier", 1, 1)
        _pause_if_asked(settings.state_dir, spec.id, "withdrawn")
    seconds["barrier"] = time.perf_counter() - clock
    if cascade:  # idempotent, so a resumed run repeats it rather than trusting a phase
        clock = time.perf_counter()
        progress("hold", 0, 1)
        hold(store, spec)
        progress("hold", 1, 1)
        seconds["hold"] = time.perf_counter() - clock

    clock = time.perf_counter()
    root_keys = [artifact_key(spec.ns, u) for u in spec.roots]
    rows = store.read(CASCADE_NODES, event_key=key, keys=root_keys)[0]["rows"]
    family = _family(store, registry, spec, rows)
    seconds["candidates"] = time.perf_counter() - clock
    result, chosen, repair_all = select(
        family,
        chosen_lam,
        chosen_selector,
        backend=settings.solver,
        threshold=settings.solver_threshold,
    )
    seconds["selection"] = time.perf_counter() - clock - seconds["candidates"]
    if reached("selected"):  # a resumed run keeps the selection it recorded
        recorded = {r["uid"] for r in rows if r["selected"]}
        chosen = [c.index for c in family.candidates if c.uid in recorded]
    else:
        clock = time.perf_counter()
        chosen_set = set(chosen)
        edge_of = {r["vid"]: r["withdrew"] for r in rows}
        candidate_rows = [
            {
                "withdrew": edge_of[c.vid],
                "vid": c.vid,
                "mode": c.mode.value,
                "executable": c.executable,
                "reason": c.reason,
                "value": c.value,
                "cost": c.cost,
                "requires": list(c.requires),
                "selected": c.index in chosen_set,
            }
            for c in family.candidates
        ]
        for start in range(0, len(candidate_rows), settings.batch_size):
            store.write(
                RECORD_CANDIDATES,
                event_key=key,
                rows=candidate_rows[start : start + settings.batch_size],
            )
            # A crash here leaves some WITHDREW edges written: the rerun reads them back
            # (`withdrew`) and MERGEs the rest, so each node keeps exactly one.
            _pause_if_asked(settings.state_dir, spec.id, "recording")
        if not reached("candidates"):
            mark("candidates", {"candidates": len(family.candidates)})
        mark("selected", {"objective": result.objective, "selected": len(chosen)})
        # Writing the facts is its own figure: at 100k candidates it outweighs the solve.
        seconds["record"] = time.perf_counter() - clock

    option_map: dict[str, Any] = dict(options or {})
    clock = time.perf_counter()
    attempts = stage(
        store,
        registry,
        spec,
        family,
        chosen,
        options=option_map,
        progress=progress,
        checkpoint=lambda point: _pause_if_asked(settings.state_dir, spec.id, point),
    )
    if not reached("staged"):
        mark("staged", {"staged": sum(1 for a in attempts if a.successor is not None)})
    seconds["execution"] = time.perf_counter() - clock

    clock = time.perf_counter()
    attempts = validate(store, registry, attempts, progress=progress)
    if not reached("validated"):
        mark("validated", {"validated": sum(1 for a in attempts if a.validated)})
    seconds["validation"] = time.perf_counter() - clock

    clock = time.perf_counter()
    cost = sum(family.candidates[i].cost for i in chosen)
    value = sum(family.candidates[i].value for i in chosen)
    figures = {
        "objective": value - chosen_lam * cost,
        "repair_value": value,
        "cost": cost,
        "repair_all_cost": repair_all.cost,
        "repair_all_value": repair_all.repair,
        "backend": result.backend,
    }
    outcomes = publish(
        store,
        spec,
        family,
        chosen,
        attempts,
        figures,
        checkpoint=lambda point: _pause_if_asked(settings.state_dir, spec.id, point),
    )
    seconds["publication"] = time.perf_counter() - clock
    _pause_if_asked(settings.state_dir, spec.id, "published")
    return _report(
        spec,
        chosen_selector,
        chosen_lam,
        len(rows),
        family,
        chosen,
        outcomes,
        figures,
        seconds,
        resumed_from,
    )


def _report(
    spec: RepairEventSpec,
    selector: str,
    lam: float,
    withdrawn: int,
    family: CandidateFamily,
    chosen: Sequence[int],
    outcomes: Outcomes,
    figures: Mapping[str, Any],
    seconds: dict[str, float],
    resumed_from: str | None,
) -> RepairReport:
    return RepairReport(
        event=spec.id,
        type=spec.type.value,
        status="completed",
        selector=selector,
        lam=lam,
        withdrawn=withdrawn,
        candidates=len(family.repairable),
        executable=sum(1 for c in family.repairable if c.executable),
        selected=sorted(family.candidates[i].uid for i in chosen),
        outcomes={k: sorted(v) for k, v in outcomes.sets.items()},
        objective=float(figures["objective"]),
        repair_value=float(figures["repair_value"]),
        cost=float(figures["cost"]),
        repair_all_value=float(figures["repair_all_value"]),
        repair_all_cost=float(figures["repair_all_cost"]),
        backend=str(figures["backend"]),
        seconds=seconds,
        details=dict(outcomes.details),
        resumed_from=resumed_from,
    )


def report_of(
    store: Store, ns: str, event_id: str, resumed_from: str | None = None
) -> RepairReport:
    """Rebuild a completed event's report from the graph (the audit trail is the truth)."""
    key = event_key(ns, event_id)
    events = store.read(GET_EVENT, key=key)
    if not events:
        raise InputError(f"no event {event_id!r} in namespace {ns!r}")
    event = events[0]["event"]
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


def resume(
    store: Store,
    registry: Registry,
    ns: str,
    event_id: str | None = None,
    progress: Progress = lambda phase, done, total: None,
) -> list[RepairReport]:
    """Complete interrupted events (one, or every open one of the namespace, oldest first)."""
    if event_id is not None:
        found = store.read(GET_EVENT, key=event_key(ns, event_id))
        if not found:
            raise InputError(f"no event {event_id!r} in namespace {ns!r}")
        events = [found[0]["event"]]
    else:
        ids = [row["id"] for row in store.read(OPEN_EVENTS, ns=ns)]
        events = [store.read(GET_EVENT, key=event_key(ns, i))[0]["event"] for i in ids]
    reports = []
    for event in events:
        spec = parse_event(event["spec"], f"event {event['id']} as recorded")
        reports.append(run(store, registry, spec, progress=progress))
    return reports


def _pause_if_asked(state_dir: Path, event_id: str, phase: str) -> None:
    if os.environ.get(PAUSE_ENV) != phase:
        return
    marker = state_dir / f"fault-{event_id}-{phase}"
    marker.parent.mkdir(parents=True, exist_ok=True)
    marker.write_text(str(os.getpid()), encoding="utf-8")
    while True:  # the test kills us here with SIGKILL
        time.sleep(1)
