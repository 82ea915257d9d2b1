"""One repair event, read top to bottom as the contract (SPEC §2-6).

    open the event -> barrier -> hold -> candidates -> selection -> record
    -> execution -> validation -> publication (-> erasure) -> report

`_run` is that sequence, one `with clock.step(name):` block per step. The step names are
what the report's `seconds` and the progress lines say; each step records the event's
phase (`events.PHASES`) named beside it:

    step         SPEC  records phase   what it does
    barrier      §3    withdrawn       withdraw C(F) in one transaction (F's replacements)
    hold         §3    (withdrawn)     name the holder on every withdrawn node
    candidates   §4    -               read the withdrawn cascade, build the family Q
    selection    §5    -               the min-cut (a resumed run keeps its recorded one)
    record       §4-5  candidates, selected   the facts on the audit edges
    execution    §6    staged          build every selected successor; the writer stages
                                       and republishes each batch behind the builds
    validation   §6    validated       judge what execution left without a verdict
    publication  §6    published       every other outcome, the completing commit
    erasure      -     erased          redact every copy of erased text (erasing events)

Each step lives in its own module and takes the data it needs; `events.py` owns the
event's phases, so a crashed repair resumes by running the same sequence again: steps
whose phase is recorded are skipped (the barrier is never lifted by a crash), staged
successors of the crashed run are reused (keyed by version id), and successors an
interrupted publication already swapped in are not published twice. `plan` runs the
read-only half (cascade, candidates, selection) and writes nothing.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass, replace
from functools import partial
from typing import Any, cast

from memorepair import (
    audit,
    barrier,
    cascade,
    erasure,
    events,
    execution,
    publication,
    validation,
    values,
)
from memorepair.candidates import CandidateFamily, CascadeNode, build_candidates, table_key
from memorepair.cascade import Cascade
from memorepair.embedding import EmbeddingBacklog, Indexing, searchable
from memorepair.errors import InputError, MemoRepairError
from memorepair.events import Event, RepairReport
from memorepair.execution import Attempt
from memorepair.graphs import collector_paused
from memorepair.model import (
    Artifact,
    Mode,
    Progress,
    RepairEventSpec,
    Visibility,
    lambda_problem,
)
from memorepair.operators.common import shared_words
from memorepair.operators.registry import OperatorRegistry
from memorepair.operators.sandbox import session as sandbox_session
from memorepair.publication import Outcomes
from memorepair.selection import EventSelection, Selector, frontier, select, selection_problem
from memorepair.settings import RepairConfig
from memorepair.store import Store


def _quiet(step: str, done: int, total: int) -> None:
    """The default progress: nothing."""


@dataclass(frozen=True)
class Plan:
    """A dry run: what `repair` would withdraw, repair and remove. Changes nothing."""

    spec: RepairEventSpec
    cascade: list[str]
    family: CandidateFamily
    selection: EventSelection
    lam: float  # the λ it selected at: the caller's, else the event file's, else the setting

    @property
    def selected(self) -> tuple[str, ...]:
        return self.selection.selected

    def frontier(self) -> dict[str, Any]:
        """The exact trade-off over λ for this event (``selection.frontier``): each step's
        λ range, what it repairs (count, share of the runnable candidates, value in reads,
        cost in seconds, both also as shares of Repair-all's), the candidates it skips that
        the step before repaired, and which step the plan's λ falls in."""
        problem, uids = selection_problem(self.family)
        everything = self.selection.repair_all
        runnable = sum(everything.selected)
        steps, previous = [], set(uids)
        for step in frontier(problem):
            chosen = {u for u, x in zip(uids, step.selected, strict=True) if x}
            steps.append(
                {
                    "lambda_from": step.lam_from,
                    "lambda_to": step.lam_to,
                    "selected": len(chosen),
                    "recovered": len(chosen) / runnable if runnable else None,
                    "value": step.repair,
                    "value_share": step.repair / everything.repair if everything.repair else None,
                    "cost": step.cost,
                    "cost_share": step.cost / everything.cost if everything.cost else None,
                    "skips": sorted(previous - chosen),
                    "default": _holds(step.lam_from, step.lam_to, self.lam),
                }
            )
            previous = chosen
        return {
            "event": self.spec.id,
            "lambda": self.lam,
            "units": {"value": "reads", "cost": "seconds", "lambda": "reads per second"},
            "runnable": runnable,
            "repair_all_value": everything.repair,
            "repair_all_cost": everything.cost,
            "steps": steps,
        }

    def as_dict(self) -> dict[str, Any]:
        in_selection = set(self.selection.selected)
        result, repair_all = self.selection.result, self.selection.repair_all
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
                    "value_source": c.value_source,
                    "cost_source": c.cost_source,
                    "requires": list(c.requires),
                    "selected": c.uid in in_selection,
                    "reason": c.reason,
                }
                for c in self.family.candidates
            ],
            "objective": result.objective,
            "repair_value": result.repair,
            "cost": result.cost,
            "backend": result.backend,
            "repair_all_cost": repair_all.cost,
            "repair_all_value": repair_all.repair,
            "lambda": self.lam,
        }


def _holds(lam_from: float, lam_to: float | None, lam: float) -> bool:
    """Whether a frontier step holds at ``lam``; at a breakpoint the next step does
    (ties are not repaired), and λ = 0 belongs to the first step."""
    return (lam_from < lam or lam == lam_from == 0.0) and (lam_to is None or lam < lam_to)


def plan(
    store: Store,
    registry: OperatorRegistry,
    config: RepairConfig,
    spec: RepairEventSpec,
    *,
    lam: float | None = None,
    selector: Selector | None = None,
) -> Plan:
    """The cascade, candidates and selection an event would get now; writes nothing."""
    with collector_paused():
        return _planned(store, registry, config, spec, lam, selector)[0]


def _planned(
    store: Store,
    registry: OperatorRegistry,
    config: RepairConfig,
    spec: RepairEventSpec,
    lam: float | None,
    selector: Selector | None,
) -> tuple[Plan, Cascade]:
    lam_, selector_ = resolve(spec, lam, selector, config)
    reached = cascade.reach(store, spec)
    family = candidate_family(store, registry, config, spec, reached)
    selection = select(
        family, lam_, selector_, backend=config.solver, threshold=config.solver_threshold
    )
    return Plan(spec, reached.uids, family, selection, lam_), reached


@dataclass(frozen=True)
class Preview:
    """A plan with its successors built and judged in memory: what `repair` would withdraw,
    publish and leave withdrawn if it ran now. Nothing is written (no event, no staged
    node); the event's effect on its roots is applied in memory (`execution.build_dry`)."""

    plan: Plan
    nodes: tuple[CascadeNode, ...]  # C(F) with each node's inputs
    attempts: tuple[Attempt, ...]  # the selected candidates, built and judged
    outcomes: Outcomes  # what would become of every node (published: would publish)
    current: Mapping[str, Artifact]  # every cascade node's current version, by vid


def preview(
    store: Store,
    registry: OperatorRegistry,
    config: RepairConfig,
    spec: RepairEventSpec,
    *,
    lam: float | None = None,
    selector: Selector | None = None,
) -> Preview:
    """`plan`, then each selected successor built (`execution.build_dry`) and validated in
    memory, and the publication closure decided as `publish` would decide it."""
    with collector_paused(), sandbox_session(), shared_words():
        planned, reached = _planned(store, registry, config, spec, lam, selector)
        family, selected = planned.family, planned.selected
        erased = erasure.planned(store, spec, reached.uids)
        built = execution.build_dry(store, registry, spec, family, selected, erased=erased)
        attempts = tuple(validation.judge(registry, a) for a in built)
        publishable, outcomes = publication.decide(family, selected, attempts)
        outcomes.sets["published"] = sorted(a.candidate.uid for a in publishable)
        current = execution.read_versions(store, [n.vid for n in reached.nodes])
    return Preview(planned, reached.nodes, attempts, outcomes, current)


def run(
    store: Store,
    registry: OperatorRegistry,
    config: RepairConfig,
    indexing: Indexing,
    spec: RepairEventSpec,
    *,
    lam: float | None = None,
    selector: Selector | None = None,
    progress: Progress = _quiet,
    recorded: bool = False,
    backlog: EmbeddingBacklog | None = None,
    by: str | None = None,
) -> RepairReport:
    """Run (or resume) one repair event to completion. Idempotent by event id.

    `recorded`: the spec is the one the event node keeps (`resume`), not the caller's.
    `indexing` gives the replacements and successors their search fields; with a
    `backlog` (deferred embeddings) the successors' vectors are written by it just after
    their publication instead of as they are staged.
    `by`: the principal asking (recorded on the event when this run creates it).
    Its writes go in batches of `config.batch` rows (MEMOREPAIR_REPAIR_BATCH).
    """
    store.require_schema()
    lam_, selector_ = resolve(spec, lam, selector, config)
    _check_replacements(spec, config.max_content_bytes)
    writers = _Writers(indexing, backlog)
    retried = store.retried_transactions
    batched = store.resized(config.batch)
    with collector_paused():
        report = _run(
            batched, registry, config, writers, spec, lam_, selector_, progress, recorded, by
        )
    return replace(report, retried=store.retried_transactions - retried)


def resume(
    store: Store,
    registry: OperatorRegistry,
    config: RepairConfig,
    indexing: Indexing,
    ns: str,
    event_id: str | None = None,
    progress: Progress = _quiet,
    backlog: EmbeddingBacklog | None = None,
    by: str | None = None,
) -> list[RepairReport]:
    """Complete interrupted events (one, or every open one of the namespace, oldest first),
    with exactly the registry and configuration a fresh run gets. An event that cannot
    continue is reported (status "skipped", the reason in its details) and the others
    still run."""
    reports = []
    for spec in events.open_event_specs(store, ns, event_id):
        try:
            reports.append(
                run(
                    store,
                    registry,
                    config,
                    indexing,
                    spec,
                    progress=progress,
                    recorded=True,
                    backlog=backlog,
                    by=by,
                )
            )
        except MemoRepairError as exc:
            reports.append(events.skipped(spec, str(exc)))
    return reports


def retry(
    store: Store,
    registry: OperatorRegistry,
    config: RepairConfig,
    indexing: Indexing,
    ns: str,
    event_id: str,
    progress: Progress = _quiet,
    backlog: EmbeddingBacklog | None = None,
    by: str | None = None,
) -> RepairReport:
    """Re-attempt what an event left failed or blocked, as a follow-up event linked to it.

    The follow-up (`<id>.retry-<n>`) takes over the stranded versions at its barrier and
    repairs them under the same selection rules and lambda, with the registry as it is now
    (a back-end installed since, say). An interrupted retry is resumed instead.
    """
    go = partial(run, store, registry, config, indexing, progress=progress, backlog=backlog, by=by)
    original = events.recorded_spec(store, ns, event_id)
    chain = events.retries(store, ns, event_id)
    if chain and chain[-1]["status"] == "open":
        return go(events.recorded_spec(store, ns, chain[-1]["id"]), recorded=True)
    base = chain[-1]["id"] if chain else event_id
    stranded = sorted(s["uid"] for s in audit.report_of(store, ns, base).stranded)
    if not stranded:
        raise InputError(f"event {base!r} left nothing failed or blocked to retry")
    record = events.record(store, ns, event_id)
    spec = RepairEventSpec.model_validate(
        {
            "id": f"{event_id[:110]}.retry-{len(chain) + 1}",
            "type": original.type,
            "roots": original.roots,
            "ns": ns,
            "lambda": float(record["lambda"]),
            "reason": f"retry of {base}: {len(stranded)} failed or blocked",
            "interface": original.interface,
            "retry_of": base,
        }
    )
    return go(spec, selector=cast(Selector, record["selector"]))


def resolve(
    spec: RepairEventSpec, lam: float | None, selector: Selector | None, config: RepairConfig
) -> tuple[float, Selector]:
    """The lambda and selector of a run: the caller's, else the event file's, else the
    settings'. A bad override is refused before anything is recorded."""
    problem = None if lam is None else lambda_problem(lam)
    if problem:
        raise InputError(problem)
    lam_ = lam if lam is not None else spec.lam if spec.lam is not None else config.lam
    return lam_, selector or config.selector


@dataclass(frozen=True)
class _Writers:
    """What a run writes search fields with: `indexing`, and the store's `backlog` when
    embeddings are deferred (the successors' vectors follow their publication)."""

    indexing: Indexing
    backlog: EmbeddingBacklog | None

    def held(self) -> AbstractContextManager[None]:
        """The backlog held back while the repair writes (they would compete)."""
        return self.backlog.held() if self.backlog is not None else nullcontext()

    def requeue(self, store: Store, spec: RepairEventSpec) -> None:
        """A resumed event: the vectors its published successors still lack (a process
        killed between publication and its embedding writer's last write) are queued
        again. Without a backlog (embeddings inline or off) nothing was deferred: a store
        that switched modes between the kill and the resume leaves them to `reindex`."""
        if self.backlog is not None:
            self.backlog.add(publication.unindexed(store, spec))


def _run(
    store: Store,
    registry: OperatorRegistry,
    config: RepairConfig,
    writers: _Writers,
    spec: RepairEventSpec,
    lam: float,
    selector: Selector,
    progress: Progress,
    recorded: bool = False,
    by: str | None = None,
) -> RepairReport:
    event, resumed_from = events.open_event(
        store,
        spec,
        lam=lam,
        selector=selector,
        state_dir=config.state_dir,
        recorded=recorded,
        by=by,
    )
    if event.completed:
        writers.requeue(store, spec)
        return audit.report_of(store, spec.ns, spec.id, resumed_from=event.phase)
    if recorded and not event.reached("withdrawn") and spec.replacements:
        _refuse(
            event,
            "it was interrupted before its barrier (nothing was withdrawn) and its "
            "replacement text is not kept; submit the event file again",
        )
    clock = _Clock(progress)
    if not event.reached("withdrawn"):
        with clock.step("barrier"):
            _withdraw(store, event, config.busy_wait_s, writers.indexing)
    if event.cascade:  # idempotent: a resumed run repeats it rather than trusting a phase
        with clock.step("hold"):
            barrier.hold(store, spec)
    with clock.step("candidates"):
        withdrawn = cascade.read_withdrawn(store, spec, event.key)
        family = candidate_family(store, registry, config, spec, withdrawn)
    with clock.step("selection"):
        selection = _select(event, family, withdrawn, config)
    if not event.reached("selected"):
        with clock.step("record"):
            _record(store, event, withdrawn, family, selection, config.pace)
    if resumed_from is not None:
        writers.requeue(store, spec)
    attempts, outcomes = _rebuild(
        store, registry, config, writers, event, family, selection, progress, clock
    )
    proof = None
    if spec.erases:
        with clock.step("erasure"):
            proof = erasure.erase(store, event)
    report = _report(event, len(withdrawn.nodes), family, selection, outcomes, resumed_from)
    work_s = sum(a.work_s for a in attempts if a.work_s is not None)
    cpu_s = sum(a.cpu_s for a in attempts if a.cpu_s is not None)
    return replace(report, seconds=clock.seconds, work_s=work_s, work_cpu_s=cpu_s, erasure=proof)


def _rebuild(
    store: Store,
    registry: OperatorRegistry,
    config: RepairConfig,
    writers: _Writers,
    event: Event,
    family: CandidateFamily,
    selection: EventSelection,
    progress: Progress,
    clock: _Clock,
) -> tuple[list[Attempt], Outcomes]:
    """Execution (which publishes batch by batch), validation and the closing publication,
    with the embedding backlog held back meanwhile: its writes would compete with the
    repair's, and the successors' vectors follow once it ends."""
    with writers.held():
        # One sandbox worker for the event's chains and tool calls; support texts split
        # into words once for all its successors' checks.
        with sandbox_session(), shared_words():
            with clock.step("execution"):
                attempts, written = _execute(
                    store, registry, config, writers, event, family, selection, progress
                )
            with clock.step("validation"):
                attempts = _validate(store, registry, event, attempts, progress)
        with clock.step("publication"):
            outcomes = _publish(store, event, family, selection, attempts, written)
    return attempts, outcomes


def _check_replacements(spec: RepairEventSpec, limit: int) -> None:
    """A replacement passes the content cap a recorded artifact does (before anything)."""
    for replacement in spec.replacements:
        size = len(replacement.content.encode("utf-8"))
        if size > limit:
            raise InputError(
                f"event {spec.id!r}: the replacement of {replacement.replaces!r} is {size} "
                f"bytes, over MEMOREPAIR_MAX_CONTENT_BYTES={limit}"
            )


def _refuse(event: Event, why: str) -> None:
    error = InputError(f"event {event.spec.id!r} cannot continue: {why}")
    event.refuse(error)
    raise error


def candidate_family(
    store: Store,
    registry: OperatorRegistry,
    config: RepairConfig,
    spec: RepairEventSpec,
    reached: Cascade,
) -> CandidateFamily:
    """The mode map over the cascade, each candidate with the operator that will build it,
    its value from recorded use and its cost from measured work (values.py): reads and
    seconds."""

    def operator_for(mode: Mode, node: CascadeNode) -> str | None:
        operator = registry.operator(mode, _skeleton(spec.ns, node))
        return operator.name if operator is not None else None

    uses = values.read_uses(store, spec.ns, [n.uid for n in reached.nodes if not n.root])

    def value_of(node: CascadeNode, prior: float) -> tuple[float, str]:
        return values.value_from_use(
            prior,
            uses.by_uid.get(node.uid),
            now=uses.now,
            since=uses.since,
            created=node.created,
            half_life_s=config.half_life_s,
            warmup_s=config.warmup_s,
        )

    work = values.read_work(store, spec.ns)

    def cost_of(node: CascadeNode, prior: float, operator: str | None) -> tuple[float, str]:
        median = work.median(operator, table_key(node.kind, node.arch))
        return values.cost_from_work(prior, node.work_s, median)

    return build_candidates(
        reached.nodes,
        spec.type,
        reached.served_outside,
        default_value=config.default_value,
        default_cost=config.default_cost,
        operator_for=operator_for,
        value_of=value_of,
        cost_of=cost_of,
    )


def _withdraw(store: Store, event: Event, wait_s: float, indexing: Indexing) -> None:
    try:
        barrier.withdraw_when_free(
            store,
            event.spec,
            cascade=event.cascade,
            commit=event.commit("withdrawn"),
            wait_s=wait_s,
            indexing=indexing,
        )
    except InputError as exc:  # nothing was withdrawn; the id may be used again
        event.refuse(exc)
        raise


def _select(
    event: Event, family: CandidateFamily, withdrawn: Cascade, config: RepairConfig
) -> EventSelection:
    """The selection at the event's lambda; a resumed run keeps the one it recorded."""
    selection = select(
        family,
        event.lam,
        cast(Selector, event.selector),
        backend=config.solver,
        threshold=config.solver_threshold,
    )
    if not event.reached("selected"):
        return selection
    recorded = tuple(c.uid for c in family.candidates if c.uid in withdrawn.recorded_selection)
    return replace(selection, selected=recorded)


def _record(
    store: Store,
    event: Event,
    withdrawn: Cascade,
    family: CandidateFamily,
    selection: EventSelection,
    pace: float,
) -> None:
    """The candidate facts on the audit edges, then the candidates and selected phases
    (re-recording facts is harmless: each edge is merged once)."""
    cascade.record_facts(
        store,
        event.key,
        withdrawn,
        family,
        selection.selected,
        checkpoint=event.checkpoint,
        pace=pace,
    )
    event.complete("candidates", {"candidates": len(family.candidates)})
    event.complete(
        "selected", {"objective": selection.result.objective, "selected": len(selection.selected)}
    )


def _execute(
    store: Store,
    registry: OperatorRegistry,
    config: RepairConfig,
    writers: _Writers,
    event: Event,
    family: CandidateFamily,
    selection: EventSelection,
    progress: Progress,
) -> tuple[list[Attempt], publication.Publisher]:
    """Execution with publication behind it: each batch of successors is staged and, where
    the closure allows, published by the writer while the next batch is built. With a
    backlog the successors' embeddings are deferred until after their publication. An
    erasing event first records the fingerprints of what it erases, which no successor
    may carry (`erasure.prepare`)."""
    erased = erasure.prepare(store, event) if event.spec.erases else None
    writer = publication.Publisher(
        store,
        event.spec,
        prepare=searchable(writers.indexing, embed=writers.backlog is None),
        checkpoint=event.checkpoint,
        backlog=writers.backlog,
        pace=config.pace,
        writers=config.writers,
        progress=progress,
        total=len(selection.selected),
    )
    with writer:
        attempts = execution.stage(
            store,
            registry,
            event.spec,
            family,
            selection.selected,
            progress=progress,
            write=writer.add,
            judge=partial(validation.judge, registry),
            erased=erased,
        )
    event.complete("staged", {"staged": sum(1 for a in attempts if a.successor is not None)})
    return attempts, writer


def _validate(
    store: Store,
    registry: OperatorRegistry,
    event: Event,
    attempts: list[Attempt],
    progress: Progress,
) -> list[Attempt]:
    checked = validation.validate(store, registry, attempts, progress=progress)
    event.complete("validated", {"validated": sum(1 for a in checked if a.validated)})
    measured = ((a.candidate.operator, a.candidate.table_key, a.work_s) for a in checked)
    values.record_work(store, event.spec.ns, measured)  # the running medians learn
    return checked


def _publish(
    store: Store,
    event: Event,
    family: CandidateFamily,
    selection: EventSelection,
    attempts: list[Attempt],
    written: publication.Publisher,
) -> Outcomes:
    return publication.publish(
        store,
        event.spec,
        family,
        selection.selected,
        attempts,
        written=written,
        figures=_figures(event, family, selection),
        commit=event.commit("published", status="open" if event.spec.erases else "completed"),
    )


def _figures(event: Event, family: CandidateFamily, selection: EventSelection) -> dict[str, Any]:
    """The selection's value and cost, recorded on the event with the outcome counts."""
    cost = sum(family.by_uid[u].cost for u in selection.selected)
    value = sum(family.by_uid[u].value for u in selection.selected)
    return {
        "objective": value - event.lam * cost,
        "repair_value": value,
        "cost": cost,
        "repair_all_cost": selection.repair_all.cost,
        "repair_all_value": selection.repair_all.repair,
        "backend": selection.result.backend,
    }


def _report(
    event: Event,
    withdrawn: int,
    family: CandidateFamily,
    selection: EventSelection,
    outcomes: Outcomes,
    resumed_from: str | None,
) -> RepairReport:
    figures = _figures(event, family, selection)
    return RepairReport(
        event=event.spec.id,
        type=event.spec.type.value,
        status=event.status,
        selector=event.selector,
        lam=event.lam,
        withdrawn=withdrawn,
        candidates=len(family.repairable),
        executable=sum(1 for c in family.repairable if c.executable),
        selected=sorted(selection.selected),
        outcomes={k: sorted(v) for k, v in outcomes.sets.items()},
        objective=float(figures["objective"]),
        repair_value=float(figures["repair_value"]),
        cost=float(figures["cost"]),
        repair_all_value=float(figures["repair_all_value"]),
        repair_all_cost=float(figures["repair_all_cost"]),
        backend=str(figures["backend"]),
        details=dict(outcomes.details),
        resumed_from=resumed_from,
    )


def _skeleton(ns: str, node: CascadeNode) -> Artifact:
    """What operators' `accepts` look at (kind, arch, recipe), without the content."""
    return Artifact(
        uid=node.uid,
        version=node.version,
        ns=ns,
        kind=node.kind,
        arch=node.arch,
        content="",
        recipe=node.recipe,
        visibility=Visibility.WITHDRAWN,
        inputs=list(node.inputs),
    )


class _Clock:
    """Times each step (seconds per step, summed) and reports it as started and done."""

    def __init__(self, progress: Progress) -> None:
        self.progress = progress
        self.seconds: dict[str, float] = {}

    @contextmanager
    def step(self, name: str) -> Iterator[None]:
        """One step of the sequence, under its name (the module docstring's table): the
        report's `seconds` and the progress lines use it; a step that raises is not done."""
        self.progress(name, 0, 1)
        started = time.perf_counter()
        yield
        self.seconds[name] = self.seconds.get(name, 0.0) + time.perf_counter() - started
        self.progress(name, 1, 1)
