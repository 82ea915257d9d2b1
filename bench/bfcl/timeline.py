"""The evaluation as a deployment: each system keeps one memory, used and repaired in turn.

Per system (its own namespace of the same server): the memory is imported once; a
warm-up period of use (look-ups drawn from the memory's popularity, through the serving
read, so use is recorded); then round after round of events, each followed by the
post-event workload (look-ups over the affected tasks, recorded too: what is read after
one event is what the next one values). Round 0 gives the engine measured costs (every
successor it builds carries its measured seconds, and the namespace's running medians
learn); the later rounds are measured. Systems take each event in turn, so they see the
machine's load alike and each ratio compares runs made together.

Per (system, event), before the repair, the plan says what the event could publish (the
candidates Repair-all would select in this system's state); the repair's report says
what was published, what failed and the measured seconds of its operators' work; the
look-ups say what was served. For the default system the plan also gives the exact
frontier over λ and the event's closure problem for the bound.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, TextIO

from bench.bfcl.builder import Memory
from bench.bfcl.events import BenchEvent
from bench.bfcl.graph import cascade, influence_children
from bench.bfcl.metrics import ExposureCheck, Recovery, Served, availability, exposure
from bench.bfcl.workload import workload
from memorepair.api import MemoryStore
from memorepair.candidates import CandidateFamily
from memorepair.repair import Plan
from memorepair.selection import Selector


@dataclass(frozen=True)
class System:
    """A selector at a λ (None: the settings' λ, the deployment's default)."""

    name: str
    selector: Selector
    lam: float | None = None


#: The default system: min-cut at the settings' λ, values from use, costs from work.
DEFAULT = System("mincut", "mincut")


def systems(lambdas: Sequence[float] = (), ablation: bool = False) -> list[System]:
    """No cascade repair, Repair-all and the default; min-cut at other λ; greedy."""
    out = [System("none", "none"), System("all", "all"), DEFAULT]
    out += [System(f"mincut@{lam:g}", "mincut", lam) for lam in lambdas]
    return out + ([System("greedy", "greedy")] if ablation else [])


@dataclass
class EventRow:
    """One event under one system (a row of results.csv)."""

    category: str
    round: int
    event: str
    event_type: str
    system: str
    lam: float | None
    cascade: int
    runnable: int  # what the event could publish
    selected: int
    published: int
    failed: int
    blocked: int
    removed: int
    unselected: int
    lookups: int
    exposed: int
    exposure: float
    availability: float
    recovered: float | None
    uids_hit: int
    uids_eligible: int
    looks_hit: int
    looks_eligible: int
    served: str  # per look-up, 1 if it was served, else 0 (compared with Repair-all's)
    planned_s: float  # the engine's estimate of the selection's seconds (sum of c)
    planned_all_s: float  # ... and of Repair-all's, in the same state
    work_s: float  # measured seconds of the operators' work
    cpu_s: float  # ... and their CPU seconds (sandboxed jobs included): load-independent
    repair_s: float  # wall time of the repair call
    failures: str
    #: Per kind (``skill/chain``...): published successors, their measured seconds and the
    #: engine's estimate of them (c), as JSON ``{kind: [n, measured, planned]}``.
    by_kind: str = "{}"


@dataclass(frozen=True)
class PlannedEvent:
    """The default system's plan of one measured event: its frontier over λ and what
    each candidate is worth to the post-event look-ups (for the frontier and the bound)."""

    event: str
    family: CandidateFamily
    frontier: dict[str, Any]
    runnable: frozenset[str]
    looks: Counter[str]  # post-event look-ups per runnable uid


@dataclass
class Deployment:
    """One system's memory, in a namespace of its own."""

    store: MemoryStore
    memory: Memory
    system: System
    weights: dict[str, float]
    category: str
    planned: list[PlannedEvent] = field(default_factory=list)
    _children: dict[str, list[str]] | None = None
    _kinds: dict[str, str] | None = None

    def affected(self, roots: Sequence[str]) -> set[str]:
        """C(F) in the memory as built: the post-event look-ups are drawn from the tasks
        it touches, so every system gets the same look-ups for an event, whatever earlier
        events left in its own memory."""
        if self._children is None:
            self._children = influence_children(self.memory.artifacts, self.memory.edges)
        return cascade(self._children, roots)

    def start(self, warmup: Iterable[str]) -> None:
        """A fresh import, then the warm-up period of use."""
        self.store.flush_use()
        self.store.clear()
        self.store.import_items(self.memory.items())
        for uid in warmup:
            self.store.retrieve(uid=uid, limit=1)
        self.store.flush_use()

    def fire(self, event: BenchEvent, round_: int, size: int, keep_plan: bool) -> EventRow:
        """Repair one event, then run its post-event workload."""
        spec = event.spec.model_copy(update={"ns": self.store.ns})
        selector, lam = self.system.selector, self.system.lam
        plan = self.store.plan(spec, selector=selector, lam=lam)
        runnable = _runnable(plan)
        started = time.perf_counter()
        report = self.store.repair(spec, selector=selector, lam=lam)
        repair_s = time.perf_counter() - started
        fired = self._fired(spec.id)
        lookups = workload(self.memory, self.affected(spec.roots), spec.id, size, self.weights)
        served = [self.store.retrieve(uid=uid, limit=1) for uid in lookups]
        self.store.flush_use()
        check = ExposureCheck(fired, self._live())
        retrievals = [[_served(a) for a in found] for found in served]
        outcome = Recovery(runnable, frozenset(report.published), tuple(lookups))
        if keep_plan and round_ > 0:
            looks = Counter(u for u in lookups if u in runnable)
            self.planned.append(
                PlannedEvent(spec.id, plan.family, plan.frontier(), runnable, looks)
            )
        failed = report.outcomes.get("failed", [])
        reasons = sorted({report.details.get(u, "") for u in failed} - {""})
        (uids_hit, uids_eligible), (looks_hit, looks_eligible) = outcome.uids, outcome.looks
        return EventRow(
            category=self.category,
            round=round_,
            event=spec.id,
            event_type=spec.type.value,
            system=self.system.name,
            lam=report.lam if selector != "none" else None,
            cascade=len(fired),
            runnable=len(runnable),
            selected=len(report.selected),
            published=len(report.published),
            failed=len(failed),
            blocked=len(report.outcomes.get("blocked", [])),
            removed=len(report.outcomes.get("removed", [])),
            unselected=len(report.outcomes.get("unselected", [])),
            lookups=len(lookups),
            exposed=sum(any(check.exposed(s) for s in r) for r in retrievals),
            exposure=exposure(retrievals, check),
            availability=availability(retrievals),
            recovered=outcome.recovered,
            uids_hit=uids_hit,
            uids_eligible=uids_eligible,
            looks_hit=looks_hit,
            looks_eligible=looks_eligible,
            served="".join("1" if found else "0" for found in served),
            planned_s=float(report.cost),
            planned_all_s=float(report.repair_all_cost),
            work_s=float(report.work_s),
            cpu_s=float(report.work_cpu_s),
            repair_s=repair_s,
            failures=" | ".join(reasons)[:500],
            by_kind=json.dumps(self._by_kind(spec.id), sort_keys=True),
        )

    def _by_kind(self, event_id: str) -> dict[str, list[float]]:
        """The event's published successors per kind: count, measured seconds (``work_s``)
        and the estimate the selection used (c), from its audit trail."""
        if self._kinds is None:
            self._kinds = {
                a.uid: a.kind.value + (f"/{a.arch.value}" if a.arch is not None else "")
                for a in self.memory.artifacts
            }
        out: dict[str, list[float]] = {}
        for a in self.store.audit_event(event_id).get("published", []):
            if a.get("work_s") is None:
                continue
            totals = out.setdefault(self._kinds.get(str(a["uid"]), "?"), [0.0, 0.0, 0.0])
            totals[0] += 1
            totals[1] += float(a["work_s"])
            totals[2] += float(a.get("cost") or 0.0)
        return out

    def _fired(self, event_id: str) -> dict[str, int]:
        """C(F) as the event withdrew it: every uid and the version it had then."""
        return {
            str(a["uid"]): int(a["version"])
            for artifacts in self.store.audit_event(event_id).values()
            for a in artifacts
        }

    def _live(self) -> Any:
        """The served version of a uid, read from its lineage (an audit read, which is
        not a use: the exposure check must not change what the next event values)."""
        cache: dict[str, Served | None] = {}

        def live(uid: str) -> Served | None:
            if uid not in cache:
                rows = self.store.lineage(uid, missing_ok=True)
                current = [r for r in rows if r["visibility"] == "Live"]
                cache[uid] = (
                    Served(uid, int(current[-1]["version"]), _input_uids(current[-1]["inputs"]))
                    if current
                    else None
                )
            return cache[uid]

        return live


def _runnable(plan: Plan) -> frozenset[str]:
    everything = plan.selection.repair_all.selected
    return frozenset(c.uid for c, x in zip(plan.family.repairable, everything, strict=True) if x)


def _input_uids(inputs: Sequence[str]) -> tuple[str, ...]:
    return tuple(pin.rsplit("@", 1)[0] for pin in inputs)


def _served(artifact: Any) -> Served:
    return Served(artifact.uid, artifact.version, tuple(artifact.inputs))


def run_timeline(
    deployments: Sequence[Deployment],
    warmup: Sequence[str],
    rounds: Sequence[Sequence[BenchEvent]],
    size: int,
    log: TextIO | None = None,
) -> list[EventRow]:
    """Every deployment through the same timeline, event by event (interleaved)."""
    for deployment in deployments:
        deployment.start(warmup)
    rows = []
    for r, events in enumerate(rounds):
        for event in events:
            for deployment in deployments:
                row = deployment.fire(event, r, size, deployment.system == DEFAULT)
                rows.append(row)
                if log is not None:
                    print(_progress(row), file=log, flush=True)
    return rows


def _progress(row: EventRow) -> str:
    return (
        f"  r{row.round} {row.event:<20} {row.system:<10} published {row.published:>4}"
        f"/{row.runnable:<4} failed {row.failed:<3} exposure {row.exposure:.2f} "
        f"work {row.work_s:6.2f}s ({row.repair_s:.1f}s)"
    )
