"""The evaluation harness: every event under every system, then SPEC §7's figures.

Greedy and min-cut run with two value models: the engine's per-kind constants
(``[kind]``) and values learned from use (``[use]``): after the import, a pre-event
workload drawn from the same popularity as the post-event one (other seed) goes through
``MemoryStore.retrieve`` with use recording on, so the values come from recorded reads
(docs/values.md) and nothing measured after the event is seen before it.

For each event and system the namespace is cleared, the memory imported, the event
fired through the engine's ``MemoryStore.repair`` and a seeded retrieval workload run
through ``MemoryStore.retrieve`` (the serving read). The BFCL back-ends (and, per migrate
event, the migrated one) and the bench executors ``bfcl.call`` / ``bfcl.rewrite_call``
are registered on the store once, before the first event.

Figures per (event, system):

- exposure: share of post-event retrievals that returned a version in C(F) at the event
  (still served, nothing withdrew it) or one built on support that is invalidated;
- recovered: published successors / published successors of Repair-all, same event;
- useful: the same ratio over the successors the post-event workload looked up;
- cost_norm: operator cost of what the system executed (sum of c_i over the selected
  set) / that of Repair-all, same event;
- objective: the engine's sum w - lambda * sum c over the selected set, at the system's
  lambda (``none`` selects nothing: 0).

Output: a table (systems x figures, overall and per event type) on stdout, ``results.csv``
(one row per event and system), ``summary.csv`` and ``cost_vs_recovered.png``.

Run: ``python -m bench.bfcl.eval --out bench-out/bfcl`` (a running Neo4j, as
configured for the engine; ``pip install --no-deps bfcl-eval`` and the ``bench`` extra).
"""

from __future__ import annotations

import argparse
import csv
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, TextIO

from bench.bfcl.bound import Bound, EventClosure, bound, event_closure
from bench.bfcl.builder import (
    CALL_EXECUTOR,
    DEFAULT_TASKS,
    IMPORT_VERSION,
    REWRITE_EXECUTOR,
    Memory,
    build_memory,
    conforming,
    make_backends,
)
from bench.bfcl.classes import make_migrated
from bench.bfcl.data import load_tasks
from bench.bfcl.events import DEFAULT_SEED, BenchEvent, generate_events
from bench.bfcl.executors import BfclCall, rewrite_call_record
from bench.bfcl.graph import cascade, influence_children
from bench.bfcl.metrics import ExposureCheck, Served, availability, exposure, ratio
from bench.bfcl.workload import DEFAULT_SIZE, popularity, pre_workload, workload
from memorepair.api import MemoryStore, open_store
from memorepair.candidates import CandidateFamily
from memorepair.events import RepairReport
from memorepair.model import Artifact
from memorepair.selection import Selector
from memorepair.settings import load_settings

EVENT_TYPES = ("delete", "correct", "migrate")
#: λ of the greedy and min-cut runs, for both value models. Learned values are on another
#: scale than the per-kind constants (the prior times the decayed reads), so their
#: trade-off lies at larger λ; at the constants, λ >= 2 selects nothing.
MAIN_LAMBDAS = (0.5, 1.0, 2.0, 4.0)
#: Events per type in the default run: 9 events x 18 systems take ~5 minutes on 2 cores.
DEFAULT_PER_TYPE = 3
SWEEP_LAMBDAS = (0.0, 0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 2.0, 3.0, 4.0, 6.0, 8.0, 16.0)
#: Value models: the engine's per-kind constants, or values learned from the pre-event
#: workload's recorded use (values.py); costs are the per-kind priors in both (a freshly
#: imported memory has no measured work).
VALUE_MODELS = ("kind", "use")
#: Look-ups of the pre-event workload the use model learns from.
DEFAULT_PRE = 512
#: `--full`: every conforming task of each category, 5 events per type per category.
FULL_CATEGORIES = ("multi_turn_base", "multi_turn_long_context")


@dataclass(frozen=True)
class System:
    name: str
    selector: Selector
    lam: float | None = None
    sweep: bool = False
    values: str = "kind"


def systems(sweep: bool = False) -> list[System]:
    out = [System("none", "none"), System("all", "all")]
    for model in VALUE_MODELS:
        out += [
            System(f"greedy[{model}]@{lam:g}", "greedy", lam, values=model) for lam in MAIN_LAMBDAS
        ]
        out += [
            System(f"mincut[{model}]@{lam:g}", "mincut", lam, values=model) for lam in MAIN_LAMBDAS
        ]
        if sweep:
            out += [
                System(f"mincut[{model}]@{lam:g}", "mincut", lam, sweep=True, values=model)
                for lam in SWEEP_LAMBDAS
                if lam not in MAIN_LAMBDAS
            ]
    return out


@dataclass
class Row:
    category: str
    event: str
    event_type: str
    system: str
    selector: str
    values: str
    lam: float | None
    sweep: bool
    cascade: int
    withdrawn: int
    selected: int
    published: int
    failed: int
    blocked: int
    removed: int
    unselected: int
    not_executable: int
    retrievals: int
    exposed: int
    exposure: float
    availability: float
    recovered: float | None
    looked_up: int  # published successors the post-event workload looked up
    useful: float | None  # looked_up / Repair-all's looked_up
    cost: float
    cost_norm: float | None
    objective: float
    seconds: float
    failures: str


def prepare(store: MemoryStore, memory: Memory, events: Sequence[BenchEvent]) -> None:
    """Register the bench executors and back-ends on ``store`` (once per store).

    Base back-ends first: without an interface the registry serves the first back-end of
    a tool that implements the call, so a param-only migration never shadows its tool.
    With a migrate event's interface it serves the back-end whose schema matches it.
    """
    registry = store.registry
    if registry.executor(CALL_EXECUTOR) is None:
        store.register_executor(CALL_EXECUTOR, BfclCall(registry.backend))
    if registry.executor(REWRITE_EXECUTOR) is None:
        store.register_executor(REWRITE_EXECUTOR, rewrite_call_record)
    backends = make_backends(memory.tasks)
    for backend in backends.values():
        store.register_backend(backend)
    for event in events:
        if event.migration is not None:
            store.register_backend(make_migrated(backends[event.migration.tool], event.migration))


def _served(artifact: Artifact) -> Served:
    return Served(artifact.uid, artifact.version, tuple(artifact.inputs))


def _count(report: RepairReport, outcome: str) -> int:
    return len(report.outcomes.get(outcome, []))


@dataclass
class Run:
    row: Row
    report: RepairReport
    family: CandidateFamily | None  # Repair-all's: the plan's, read just before it


@dataclass(frozen=True)
class Workloads:
    """The use distribution, the pre-event look-ups and the post-event size."""

    weights: dict[str, float]
    pre: list[str]
    size: int


def run_one(
    store: MemoryStore, memory: Memory, event: BenchEvent, system: System, loads: Workloads
) -> Run:
    """One (event, system) run on a freshly imported memory; ratios are filled in later.

    The use model first replays the pre-event workload through serving reads and
    flushes what they recorded: its values are learned from that, never from the
    post-event workload it is measured on.
    """
    start = time.perf_counter()
    store.flush_use()  # the previous run's reads, written now so `clear` deletes them
    store.clear()
    store.import_items(memory.items())
    if system.values == "use":
        for uid in loads.pre:
            store.retrieve(uid=uid, limit=1)
        store.flush_use()
    spec = event.spec.model_copy(update={"ns": store.ns})
    family = store.plan(spec, selector="all").family if system.selector == "all" else None
    report = store.repair(spec, selector=system.selector, lam=system.lam)
    fired = cascade(influence_children(memory.artifacts, memory.edges), spec.roots)

    def live(uid: str) -> Served | None:
        found = store.retrieve(uid=uid, limit=1)
        return _served(found[0]) if found else None

    check = ExposureCheck(dict.fromkeys(fired, IMPORT_VERSION), live)
    retrievals = []
    lookups = workload(memory, fired, spec.id, loads.size, loads.weights)
    for uid in lookups:
        found = live(uid)
        retrievals.append([found] if found else [])
    failures = sorted({report.details.get(u, "") for u in report.outcomes.get("failed", [])})
    row = Row(
        category=memory.tasks[0].id.rsplit("_", 1)[0] if memory.tasks else "",
        event=spec.id,
        event_type=spec.type.value,
        system=system.name,
        selector=system.selector,
        values=system.values if system.selector in ("greedy", "mincut") else "-",
        lam=report.lam if system.selector != "none" else None,
        sweep=system.sweep,
        cascade=len(fired),
        withdrawn=report.withdrawn,
        selected=len(report.selected),
        published=_count(report, "published"),
        failed=_count(report, "failed"),
        blocked=_count(report, "blocked"),
        removed=_count(report, "removed"),
        unselected=_count(report, "unselected"),
        not_executable=_count(report, "not_executable"),
        retrievals=len(retrievals),
        exposed=sum(any(check.exposed(s) for s in r) for r in retrievals),
        exposure=exposure(retrievals, check),
        availability=availability(retrievals),
        recovered=None,
        looked_up=len(set(report.published) & set(lookups)),
        useful=None,
        cost=float(report.cost),
        cost_norm=None,
        objective=float(report.objective),
        seconds=time.perf_counter() - start,
        failures=" | ".join(f for f in failures if f)[:500],
    )
    return Run(row, report, family)


@dataclass
class Evaluation:
    rows: list[Row]
    closures: list[EventClosure]  # per event, for the recovery bound
    outside: list[str]  # runs that published a successor Repair-all did not (voids the bound)


def evaluate(
    store: MemoryStore,
    memory: Memory,
    events: Sequence[BenchEvent],
    *,
    sweep: bool = False,
    size: int = DEFAULT_SIZE,
    pre: int = DEFAULT_PRE,
    seed: int = DEFAULT_SEED,
    only: Sequence[System] | None = None,
    log: TextIO | None = None,
) -> Evaluation:
    """Every event under every system (``only``: these; Repair-all is always run), with
    ratios relative to the same event's Repair-all, and each event's closure problem for
    the recovery bound."""
    chosen = list(only) if only is not None else systems(sweep)
    if not any(s.selector == "all" for s in chosen):
        chosen.insert(0, System("all", "all"))
    prepare(store, memory, events)
    weights = popularity(memory, seed)
    loads = Workloads(weights, pre_workload(memory, weights, pre, seed), size)
    result = Evaluation([], [], [])
    for event in events:
        runs = [run_one(store, memory, event, s, loads) for s in chosen]
        everything = next(r for r in runs if r.row.selector == "all")
        all_row, recovered = everything.row, set(everything.report.published)
        assert everything.family is not None
        closure = event_closure(all_row.event, everything.family, recovered, all_row.cost)
        if closure is not None:
            result.closures.append(closure)
        for run in runs:
            row = run.row
            extra = sorted(set(run.report.published) - recovered)
            if extra:
                result.outside.append(f"{row.event} {row.system}: {extra[:3]}")
            row.recovered = ratio(row.published, all_row.published)
            row.useful = ratio(row.looked_up, all_row.looked_up)
            row.cost_norm = ratio(row.cost, all_row.cost)
            result.rows.append(row)
            if log is not None:
                print(
                    f"  {row.event:<18} {row.system:<12} published {row.published:>3}"
                    f"/{all_row.published:<3} exposure {row.exposure:.2f} "
                    f"({row.seconds:.1f}s)",
                    file=log,
                    flush=True,
                )
    return result


def _mean(values: Sequence[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return statistics.fmean(known) if known else None


def summarise(rows: Sequence[Row]) -> list[dict[str, Any]]:
    """Mean figures per (system, event type) and per system over all events."""
    out: list[dict[str, Any]] = []
    names = list(dict.fromkeys(r.system for r in rows))
    present = {r.event_type for r in rows}
    for event_type in ["all", *(t for t in EVENT_TYPES if t in present)]:
        for name in names:
            group = [r for r in rows if r.system == name and event_type in ("all", r.event_type)]
            if group:
                out.append(
                    {
                        "event_type": event_type,
                        "system": name,
                        "values": group[0].values,
                        "lam": group[0].lam,
                        "events": len(group),
                        "exposure": _mean([r.exposure for r in group]),
                        "availability": _mean([r.availability for r in group]),
                        "recovered": _mean([r.recovered for r in group]),
                        "useful": _mean([r.useful for r in group]),
                        "cost_norm": _mean([r.cost_norm for r in group]),
                        "objective": _mean([r.objective for r in group]),
                    }
                )
    return out


def format_table(summary: Sequence[dict[str, Any]]) -> str:
    cols = [
        "event_type",
        "system",
        "events",
        "exposure",
        "availability",
        "recovered",
        "useful",
        "cost_norm",
        "objective",
    ]

    def cell(v: Any) -> str:
        return "-" if v is None else f"{v:.3f}" if isinstance(v, float) else str(v)

    table = [cols, *[[cell(s[c]) for c in cols] for s in summary]]
    widths = [max(len(r[i]) for r in table) for i in range(len(cols))]
    return "\n".join("  ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)) for r in table)


#: The evaluation's recovery target: recovered >= 95% of Repair-all at normalised cost <= 0.6.
TARGET_RECOVERED = 0.95
TARGET_COST = 0.6


def frontier(summary: Sequence[dict[str, Any]], model: str = "kind") -> list[str]:
    """The issue's recovery target read off the min-cut rows (means over all events).

    Says for each λ run whether it meets the target, and where the run's points come
    closest: the best recovery within the cost bound and the lowest cost at the recovery
    bound. With a λ sweep this is the measured cost/recovery frontier, so a miss is shown
    to be a property of the values and costs, not of the λ chosen.
    """
    points = sorted(
        (
            s
            for s in summary
            if s["event_type"] == "all"
            and s["system"].startswith(f"mincut[{model}]@")
            and s["recovered"] is not None
            and s["cost_norm"] is not None
        ),
        key=lambda s: float(s["lam"]),
    )
    if not points:
        return []
    target = f"recovered >= {TARGET_RECOVERED:g} at cost_norm <= {TARGET_COST:g}"
    meeting = [
        s["system"]
        for s in points
        if s["recovered"] >= TARGET_RECOVERED and s["cost_norm"] <= TARGET_COST
    ]
    lines = [
        f"{model} values, target ({target}): "
        + (f"met by {', '.join(meeting)}" if meeting else "not met")
    ]
    cheap = [s for s in points if s["cost_norm"] <= TARGET_COST]
    if cheap:
        best = max(cheap, key=lambda s: (s["recovered"], -s["cost_norm"]))
        lines.append(
            f"  best recovery at cost_norm <= {TARGET_COST:g}: {best['recovered']:.3f} "
            f"({best['system']}, cost_norm {best['cost_norm']:.3f})"
        )
    full = [s for s in points if s["recovered"] >= TARGET_RECOVERED]
    if full:
        low = min(full, key=lambda s: (s["cost_norm"], -s["recovered"]))
        lines.append(
            f"  lowest cost_norm at recovered >= {TARGET_RECOVERED:g}: {low['cost_norm']:.3f} "
            f"({low['system']}, recovered {low['recovered']:.3f})"
        )
    return lines


def bound_lines(closures: Sequence[EventClosure], outside: Sequence[str]) -> list[str]:
    """The target against every predecessor-closed selection, not just the λ run."""
    if not closures:
        return []
    if outside:  # a selection published what Repair-all did not: the bound's premise fails
        return [f"  no bound: runs published successors Repair-all did not: {outside[:3]}"]
    b: Bound = bound(closures, TARGET_COST, TARGET_RECOVERED)
    verdict = (
        "out of reach for any selection on this memory at these values and costs"
        if b.recovered_max < TARGET_RECOVERED
        else "not ruled out by the bound"
    )
    return [
        f"  bound over every predecessor-closed selection ({b.events} events, any selector, "
        f"any λ per event; Lagrangian, bench/bfcl/bound.py):",
        f"    recovered <= {b.recovered_max:.3f} at mean cost_norm <= {b.budget:g}; "
        f"cost_norm >= {b.cost_min:.3f} at mean recovered >= {b.level:g}",
        f"    target {verdict}",
    ]


def write_csv(rows: Sequence[Row], path: Path) -> None:
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=list(asdict(rows[0])))
        writer.writeheader()
        writer.writerows(asdict(r) for r in rows)


#: Legend labels for the plot: (selector, value model) -> label, marker.
_LINES = {
    ("mincut", "kind"): ("min-cut, per-kind constant values", "o-"),
    ("mincut", "use"): ("min-cut, values learned from use", "D-"),
    ("greedy", "kind"): ("greedy, per-kind constant values", "s--"),
    ("greedy", "use"): ("greedy, values learned from use", "v--"),
}


def _same_point(line: Sequence[dict[str, Any]]) -> dict[tuple[float, float], list[float]]:
    """The λ values of a line grouped by the point they land on (one label per point)."""
    points: dict[tuple[float, float], list[float]] = {}
    for s in line:
        points.setdefault((s["cost_norm"], s["recovered"]), []).append(s["lam"])
    return points


def plot(summary: Sequence[dict[str, Any]], path: Path) -> None:
    """Cost vs recovered per system (means over all events); each selector and value
    model as a line over λ."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    overall = [s for s in summary if s["event_type"] == "all" and s["cost_norm"] is not None]
    fig, ax = plt.subplots(figsize=(8, 6))
    for (selector, model), (label, marker) in _LINES.items():
        line = sorted(
            (s for s in overall if s["system"].startswith(f"{selector}[{model}]@")),
            key=lambda s: s["lam"],
        )
        if line:
            ax.plot(
                [s["cost_norm"] for s in line], [s["recovered"] for s in line], marker, label=label
            )
            for (x, y), lams in _same_point(line).items():
                ax.annotate(
                    "λ=" + ",".join(f"{lam:g}" for lam in lams),
                    (x, y),
                    fontsize=8,
                    xytext=(5, -11 if model == "use" else 4),
                    textcoords="offset points",
                )
    for s in overall:
        if s["system"] in ("none", "all"):
            name = {"none": "no cascade repair", "all": "Repair all"}[s["system"]]
            ax.plot([s["cost_norm"]], [s["recovered"]], "k^")
            ax.annotate(
                name,
                (s["cost_norm"], s["recovered"]),
                fontsize=9,
                xytext=(-60, 8) if s["system"] == "all" else (8, 14),
                textcoords="offset points",
            )
    ax.set_xlabel("normalised repair-operator cost (Repair all = 1)")
    ax.set_ylabel("validated successors recovered (Repair all = 1)")
    ax.set_title("BFCL multi-turn: cost vs recovered, by selector and value model")
    ax.set_xlim(-0.05, 1.1)
    ax.set_ylim(-0.05, 1.1)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=9, loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=150)
    plt.close(fig)


def write_summary(summary: Sequence[dict[str, Any]], path: Path) -> None:
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=list(summary[0]))
        writer.writeheader()
        writer.writerows(summary)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m bench.bfcl.eval",
        description="MemoRepair on BFCL multi-turn tool use: exposure, recovery, cost, "
        "with per-kind values and with values learned from a pre-event workload.",
    )
    parser.add_argument(
        "--tasks", type=int, default=DEFAULT_TASKS, help="BFCL tasks in memory per category"
    )
    parser.add_argument(
        "--categories",
        default="multi_turn_base",
        help="BFCL multi-turn categories, comma-separated, each its own memory (%(default)s)",
    )
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help="event seed")
    parser.add_argument(
        "--per-type",
        type=int,
        default=DEFAULT_PER_TYPE,
        help="events per type (delete, correct, migrate) per category",
    )
    parser.add_argument(
        "--workload",
        type=int,
        default=DEFAULT_SIZE,
        help="post-event retrievals per event and system",
    )
    parser.add_argument(
        "--pre",
        type=int,
        default=DEFAULT_PRE,
        help="pre-event look-ups the use model learns its values from (%(default)s)",
    )
    parser.add_argument(
        "--full",
        action="store_true",
        help=f"every conforming task of {', '.join(FULL_CATEGORIES)}, 5 events per type "
        "per category (30 events; long: see docs/evaluation.md)",
    )
    parser.add_argument("--ns", default="bench-bfcl", help="namespace (cleared before each run)")
    parser.add_argument("--sweep", action="store_true", help="also run the mincut lambda sweep")
    parser.add_argument(
        "--out",
        type=Path,
        default=Path("bench-out/bfcl"),
        help="folder for results.csv, summary.csv and cost_vs_recovered.png (%(default)s)",
    )
    parser.add_argument("--quiet", action="store_true", help="no per-run progress lines")
    return parser


def _evaluate_category(args: argparse.Namespace, category: str, store: MemoryStore) -> Evaluation:
    tasks = len(conforming(load_tasks(category))) if args.tasks <= 0 else args.tasks
    memory = build_memory(tasks, category=category)
    events = generate_events(memory, seed=args.seed, per_type=args.per_type, ns=args.ns)
    print(
        f"BFCL {category}: {len(memory.tasks)} tasks, {len(memory.artifacts)} artifacts; "
        f"{len(events)} events x {len(systems(args.sweep))} systems",
        flush=True,
    )
    return evaluate(
        store,
        memory,
        events,
        sweep=args.sweep,
        size=args.workload,
        pre=args.pre,
        seed=args.seed,
        log=None if args.quiet else sys.stderr,
    )


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.full:
        args.categories, args.tasks, args.per_type = ",".join(FULL_CATEGORIES), 0, 5
    started = time.perf_counter()
    args.out.mkdir(parents=True, exist_ok=True)
    result = Evaluation([], [], [])
    # Recorded use is written only when the harness flushes it (between runs), and
    # "never read" counts at once: the pre-event workload is the whole history. Look-ups
    # are by uid, so nothing is embedded (an import per run would embed every artifact).
    settings = load_settings(use_flush_s=3600.0, value_warmup_h=0.0, embeddings=False)
    with open_store(ns=args.ns, settings=settings) as store:
        store.apply_schema()  # idempotent; a fresh server has none
        try:
            for category in args.categories.split(","):
                part = _evaluate_category(args, category.strip(), store)
                result.rows += part.rows
                result.closures += part.closures
                result.outside += part.outside
        finally:
            store.flush_use()
            store.clear()
    summary = summarise(result.rows)
    print(format_table(summary))
    for model in VALUE_MODELS:
        for line in frontier(summary, model):
            print(line)
    for line in bound_lines(result.closures, result.outside):
        print(line)
    write_csv(result.rows, args.out / "results.csv")
    write_summary(summary, args.out / "summary.csv")
    plot(summary, args.out / "cost_vs_recovered.png")
    print(
        f"wrote {args.out / 'results.csv'}, {args.out / 'summary.csv'} and "
        f"{args.out / 'cost_vs_recovered.png'} in {time.perf_counter() - started:.0f}s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
