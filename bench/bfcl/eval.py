"""The evaluation harness, run as a deployment (``timeline.py``), and SPEC §7's figures.

Per category, one memory per system, the same timeline for all: a warm-up period of use,
a first round of events (the engine learns what its operators cost), then the measured
rounds. Systems: ``none`` (no cascade repair: only the roots are withdrawn), ``all``
(Repair-all) and ``mincut``, the default: the exact min-cut at the settings' λ, with
values learned from recorded use and costs from measured work. ``--lambdas`` adds min-cut
at other λ, ``--ablation`` greedy at the default λ.

Figures over the measured rounds, per system and event type:

- exposure: share of post-event look-ups served a version built on invalidated support;
- availability: share of look-ups that found anything;
- recovered: published / what the event could have published (every candidate
  Repair-all would select in the same state), mean over events; Repair-all's own
  failures count against it and are their own column (``failed``);
- useful: the same over the successors the post-event workload looked up, by distinct
  uid (mean over events) and by look-up (pooled: a uid read five times counts five
  times);
- seconds: the measured seconds of the operators' work (build + validation), summed,
  and as a share of Repair-all's over the same events (``work/all``, wall time: what the
  engine's costs are made of, and what the target is on); ``cpu/all`` is the same share
  in CPU seconds (the operators' thread and their sandboxed jobs), which the machine's
  load does not inflate; ``plan/all`` is the engine's own estimate of the share (sum of c
  over the selection / Repair-all's, in its own state).

Events where a ratio is undefined (nothing could be published, nothing eligible was
looked up) are counted and listed under the table. Under the target, the seconds by kind
of published successor for Repair-all and the default (count, measured, the estimate the
selection used): where a gap between ``plan/all`` and ``work/all`` comes from. For the
default system, the exact frontier over λ (every selection the min-cut would make,
planned, pooled over the measured events) and the Lagrangian bound on any selection are
printed after it.

Output: the tables on stdout; ``results.csv`` (one row per event and system),
``summary.csv``, ``frontier.csv`` and ``frontier.png`` in ``--out``.

Run: ``python -m bench.bfcl.eval`` against the configured Neo4j (``make eval``; the
bench extra and ``pip install --no-deps bfcl-eval``).
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import statistics
import sys
import time
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from bench.bfcl.bound import Bound, frontier_bound, weighted_closure
from bench.bfcl.builder import (
    CALL_EXECUTOR,
    DEFAULT_TASKS,
    REWRITE_EXECUTOR,
    Memory,
    build_memory,
    conforming,
    make_backends,
)
from bench.bfcl.classes import make_migrated
from bench.bfcl.data import MULTI_TURN_CATEGORIES, Task, load_tasks
from bench.bfcl.events import DEFAULT_SEED, BenchEvent, timeline_events
from bench.bfcl.executors import BfclCall, rewrite_call_record
from bench.bfcl.metrics import ratio
from bench.bfcl.timeline import (
    DEFAULT,
    Deployment,
    EventRow,
    PlannedEvent,
    System,
    run_timeline,
    systems,
)
from bench.bfcl.workload import DEFAULT_SIZE, popularity, pre_workload
from memorepair.api import MemoryStore, open_store
from memorepair.settings import load_settings

EVENT_TYPES = ("delete", "correct", "migrate")
#: Look-ups of the warm-up period (the use the first values are learned from).
DEFAULT_WARMUP = 512
#: Events per type in the first round and in each measured round, and measured rounds.
DEFAULT_FIRST, DEFAULT_PER_TYPE, DEFAULT_ROUNDS = 1, 3, 2
#: ``--full``: every conforming task of every multi-turn category.
FULL_PER_TYPE = 2
#: The target at the default settings: useful recovery by look-up >= 0.95 at <= 0.60 of
#: Repair-all's measured seconds (exposure 0, no Repair-all failure besides).
TARGET_USEFUL, TARGET_SECONDS = 0.95, 0.60


# --------------------------------------------------------------------------- set-up


def prepare(store: MemoryStore, tasks: Sequence[Task], events: Iterable[BenchEvent]) -> None:
    """Register the bench executors and the back-ends on ``store`` (shared by every
    namespace of it), once for every category's tasks.

    One back-end per tool for all categories (each knows every task's scenario: task ids
    name their category): the registry serves the first back-end of a tool that
    implements a call, so per-category back-ends registered one after another would hand
    a later category's replays to an earlier one that lacks their scenarios. Base
    back-ends come before the migrated ones, so a migration that keeps a function's name
    never shadows its tool; with a migrate event's interface the registry serves the
    back-end whose schema matches it.
    """
    registry = store.registry
    if registry.executor(CALL_EXECUTOR) is None:
        store.register_executor(CALL_EXECUTOR, BfclCall(registry.backend))
    if registry.executor(REWRITE_EXECUTOR) is None:
        store.register_executor(REWRITE_EXECUTOR, rewrite_call_record)
    backends = make_backends(tasks)
    for backend in backends.values():
        store.register_backend(backend)
    for event in events:
        if event.migration is not None:
            store.register_backend(make_migrated(backends[event.migration.tool], event.migration))


@dataclass
class Category:
    """One category's memory and timeline."""

    name: str
    memory: Memory
    warmup: list[str]
    rounds: list[list[BenchEvent]]
    weights: dict[str, float]


def build_category(name: str, args: argparse.Namespace) -> Category:
    tasks = len(conforming(load_tasks(name))) if args.tasks <= 0 else args.tasks
    memory = build_memory(tasks, category=name)
    rounds = timeline_events(
        memory,
        seed=args.seed,
        first=args.first,
        per_type=args.per_type,
        rounds=args.rounds,
        ns=args.ns,
    )
    weights = popularity(memory, args.seed)
    return Category(
        name, memory, pre_workload(memory, weights, args.warmup, args.seed), rounds, weights
    )


# --------------------------------------------------------------------------- summary


def _mean(values: Iterable[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return statistics.fmean(known) if known else None


def summarise(rows: Sequence[EventRow]) -> list[dict[str, Any]]:
    """Figures per (event type, system) over the measured rounds (round > 0)."""
    measured = [r for r in rows if r.round > 0]
    names = list(dict.fromkeys(r.system for r in measured))
    present = {r.event_type for r in measured}
    out: list[dict[str, Any]] = []
    for event_type in ["all", *(t for t in EVENT_TYPES if t in present)]:
        scope = [r for r in measured if event_type in ("all", r.event_type)]
        reference = {(r.category, r.event): r for r in scope if r.system == "all"}
        for name in names:
            group = [r for r in scope if r.system == name]
            if group:
                out.append(_figures(event_type, name, group, reference))
    return out


def _figures(
    event_type: str,
    name: str,
    group: Sequence[EventRow],
    reference: dict[tuple[str, str], EventRow],
) -> dict[str, Any]:
    mine = [(r, reference.get((r.category, r.event))) for r in group]
    work = sum(r.work_s for r in group)
    work_all = sum(a.work_s for _, a in mine if a is not None)
    cpu_all = sum(a.cpu_s for _, a in mine if a is not None)
    both = sum(_both(r.served, a.served) for r, a in mine if a is not None)
    return {
        "event_type": event_type,
        "system": name,
        "lam": group[0].lam,
        "events": len(group),
        "exposure": _mean(r.exposure for r in group),
        "availability": _mean(r.availability for r in group),
        "recovered": _mean(r.recovered for r in group),
        "useful_uids": _mean(ratio(r.uids_hit, r.uids_eligible) for r in group),
        "useful_looks": ratio(
            sum(r.looks_hit for r in group), sum(r.looks_eligible for r in group)
        ),
        "served_all": ratio(both, sum(a.served.count("1") for _, a in mine if a is not None)),
        "failed": sum(r.failed for r in group),
        "work_s": work,
        "work_share": ratio(work, work_all),
        "cpu_share": ratio(sum(r.cpu_s for r in group), cpu_all),
        "plan_share": ratio(sum(r.planned_s for r in group), sum(r.planned_all_s for r in group)),
        "undefined_recovered": [_name(r) for r in group if r.recovered is None],
        "undefined_useful": [_name(r) for r in group if r.looks_eligible == 0],
    }


def _both(mine: str, reference: str) -> int:
    """Look-ups served both here and by Repair-all (same look-ups: the same event)."""
    return sum(a == b == "1" for a, b in zip(mine, reference, strict=True))


def _name(row: EventRow) -> str:
    short = row.category.replace("multi_turn_", "")
    return f"{short}/{row.event}"


_COLUMNS = (
    ("event_type", "type"),
    ("system", "system"),
    ("events", "events"),
    ("exposure", "exposure"),
    ("availability", "avail"),
    ("recovered", "recovered"),
    ("useful_uids", "useful/uid"),
    ("useful_looks", "useful/look-up"),
    ("served_all", "served/all"),
    ("failed", "failed"),
    ("work_s", "work s"),
    ("work_share", "work/all"),
    ("cpu_share", "cpu/all"),
    ("plan_share", "plan/all"),
)


def format_table(summary: Sequence[dict[str, Any]]) -> str:
    def cell(v: Any) -> str:
        return "-" if v is None else f"{v:.3f}" if isinstance(v, float) else str(v)

    table = [[title for _, title in _COLUMNS]]
    table += [[cell(s[key]) for key, _ in _COLUMNS] for s in summary]
    widths = [max(len(r[i]) for r in table) for i in range(len(_COLUMNS))]
    return "\n".join("  ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)) for r in table)


def undefined_lines(summary: Sequence[dict[str, Any]]) -> list[str]:
    """The events a ratio could not be computed for, per system (overall rows)."""
    lines = []
    for s in summary:
        if s["event_type"] != "all":
            continue
        for key, what in (
            ("undefined_recovered", "nothing to publish"),
            ("undefined_useful", "no eligible look-up"),
        ):
            if s[key]:
                lines.append(
                    f"  {s['system']}: {len(s[key])} event(s) with {what}: {', '.join(s[key])}"
                )
    return lines


def failure_lines(rows: Sequence[EventRow], system: str = "all") -> list[str]:
    """Every failure of ``system`` (Repair-all by default) in the measured rounds."""
    failing = [r for r in rows if r.system == system and r.round > 0 and r.failed]
    return [f"  {r.category} {r.event}: {r.failed} failed: {r.failures}" for r in failing]


def kind_lines(rows: Sequence[EventRow], names: Sequence[str] = ("all", DEFAULT.name)) -> list[str]:
    """Where each system's measured seconds went, per kind of published successor over the
    measured rounds: how many, their measured seconds and the engine's estimate of them
    (the c the selection used), so a gap between plan/all and work/all has a kind."""
    totals: dict[str, dict[str, list[float]]] = {name: {} for name in names}
    for r in rows:
        if r.round > 0 and r.system in totals:
            for kind, (n, measured, planned) in json.loads(r.by_kind).items():
                into = totals[r.system].setdefault(kind, [0.0, 0.0, 0.0])
                for i, value in enumerate((n, measured, planned)):
                    into[i] += value
    kinds = sorted({k for per in totals.values() for k in per})
    if not kinds:
        return []
    head = "".join(f"  {name + ': n':>12} {'measured':>9} {'planned':>9}" for name in names)
    lines = [
        "  seconds by kind of published successor (measured rounds; planned: the c the "
        "selection used):",
        f"  {'kind':<14}{head}",
    ]
    for kind in kinds:
        cells = ""
        for name in names:
            n, measured, planned = totals[name].get(kind, [0.0, 0.0, 0.0])
            cells += f"  {int(n):>12} {measured:>9.3f} {planned:>9.3f}"
        lines.append(f"  {kind:<14}{cells}")
    return lines


def target_lines(
    summary: Sequence[dict[str, Any]], rows: Sequence[EventRow], lam: float
) -> list[str]:
    overall = {s["system"]: s for s in summary if s["event_type"] == "all"}
    default, everything = overall.get(DEFAULT.name), overall.get("all")
    if default is None or everything is None:
        return []
    useful, share = default["useful_looks"], default["work_share"]
    checks = {
        f"useful by look-up {_num(useful)} >= {TARGET_USEFUL:g}": useful is not None
        and useful >= TARGET_USEFUL,
        f"seconds {_num(share)} of Repair-all's <= {TARGET_SECONDS:g}": share is not None
        and share <= TARGET_SECONDS,
        f"exposure {_num(default['exposure'])} = 0": default["exposure"] == 0,
        f"Repair-all failures {everything['failed']} = 0": everything["failed"] == 0,
    }
    verdict = "met" if all(checks.values()) else "NOT met"
    served = f"; served where Repair-all served: {_num(default['served_all'])}"
    lines = [
        f"default λ = {lam:g} reads per second of repair ({1 / lam:.3g} s per read)"
        if lam
        else "default λ = 0"
    ]
    lines.append(
        f"target at the default settings: {verdict} ("
        + "; ".join(f"{text} {'yes' if ok else 'no'}" for text, ok in checks.items())
        + served
        + ")"
    )
    return lines


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


# --------------------------------------------------------------------------- frontier


@dataclass(frozen=True)
class FrontierPoint:
    """The default system's planned figures at one λ, pooled over the measured events."""

    lam: float
    useful: float | None  # look-ups of what the plans select / of what could be published
    recovered: float | None  # selected / could be published
    cost_share: float | None  # the plans' estimated seconds / Repair-all's


def frontier_points(planned: Sequence[PlannedEvent]) -> list[FrontierPoint]:
    """At every breakpoint of any event's frontier (and 0): where the pooled planned
    figures change. Exact: between two of these λ no event's selection changes."""
    events = [_event_steps(p) for p in planned]
    lams = sorted({0.0} | {step[0] for steps in events for step in steps})
    return [_point_at(lam, planned, events) for lam in lams]


def _event_steps(p: PlannedEvent) -> list[tuple[float, float | None, int, float, int]]:
    """(λ from, λ to, look-ups served, planned seconds, successors) per step."""
    selected = {c.uid for c in p.family.repairable}
    out = []
    for step in p.frontier["steps"]:
        selected -= set(step["skips"])
        looks = sum(n for uid, n in p.looks.items() if uid in selected)
        out.append((step["lambda_from"], step["lambda_to"], looks, step["cost"], step["selected"]))
    return out


def _point_at(
    lam: float,
    planned: Sequence[PlannedEvent],
    events: Sequence[Sequence[tuple[float, float | None, int, float, int]]],
) -> FrontierPoint:
    looks = cost = chosen = 0.0
    for steps in events:
        for lo, hi, hits, seconds, count in steps:
            if lo <= lam and (hi is None or lam < hi):
                looks, cost, chosen = looks + hits, cost + seconds, chosen + count
                break
    return FrontierPoint(
        lam=lam,
        useful=ratio(looks, sum(sum(p.looks.values()) for p in planned)),
        recovered=ratio(chosen, sum(len(p.runnable) for p in planned)),
        cost_share=ratio(cost, sum(p.frontier["repair_all_cost"] for p in planned)),
    )


def frontier_lines(points: Sequence[FrontierPoint], lam: float, step: float = 0.01) -> list[str]:
    """The pooled frontier, one line where a figure moved by ``step`` or more, and the
    default λ's line marked."""
    if not points:
        return []
    at_default = max((p for p in points if p.lam <= lam), key=lambda p: p.lam)
    lines = [
        "  exact frontier of the default system's plans over λ (pooled over the measured events;",
        "  planned: selected = published; seconds are the engine's estimates):",
        f"    {'λ from':>10} {'s/read':>8} {'useful/look-up':>15} {'recovered':>10} "
        f"{'plan/all':>9}",
    ]
    shown: FrontierPoint | None = None
    for p in points:
        moved = shown is None or any(
            abs((a or 0.0) - (b or 0.0)) >= step
            for a, b in ((p.useful, shown.useful), (p.cost_share, shown.cost_share))
        )
        if moved or p is at_default or p is points[-1]:
            mark = "*" if p is at_default else " "
            per_read = f"{1 / p.lam:.3g}" if p.lam > 0 else "inf"
            lines.append(
                f"  {mark} {p.lam:>10.4g} {per_read:>8} {_num(p.useful):>15} "
                f"{_num(p.recovered):>10} {_num(p.cost_share):>9}"
            )
            shown = p
    lines.append(f"  * the step the default λ = {lam:g} falls in")
    return lines


def bound_lines(planned: Sequence[PlannedEvent]) -> tuple[list[str], Bound | None]:
    """The target against every predecessor-closed selection of the default system's
    measured events (any selector, any λ per event), at the engine's estimated costs."""
    looks = sum(sum(p.looks.values()) for p in planned)
    cost = sum(p.frontier["repair_all_cost"] for p in planned)
    if not planned or looks == 0 or cost <= 0:
        return [], None
    closures = [
        weighted_closure(p.event, p.family, {u: n / looks for u, n in p.looks.items()}, 1 / cost)
        for p in planned
    ]
    b = frontier_bound(closures, TARGET_SECONDS, TARGET_USEFUL, pooled=True)
    reach = "out of reach for any selection" if b.recovered_max < TARGET_USEFUL else "within reach"
    return [
        f"  bound over every predecessor-closed selection ({b.events} events, any λ per event;"
        " exact Lagrangian dual, bench/bfcl/bound.py; estimated seconds):",
        f"    useful by look-up <= {b.recovered_max:.3f} at <= {b.budget:g} of Repair-all's "
        f"seconds; seconds >= {b.cost_min:.3f} of Repair-all's at useful >= {b.level:g}",
        f"    target {reach} at these values and costs",
    ], b


# --------------------------------------------------------------------------- files


def write_rows(rows: Sequence[Any], path: Path) -> None:
    data = [asdict(r) if not isinstance(r, dict) else r for r in rows]
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=list(data[0]))
        writer.writeheader()
        writer.writerows(data)


def plot(points: Sequence[FrontierPoint], summary: Sequence[dict[str, Any]], path: Path) -> None:
    """The default system's planned frontier and every system's measured point."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Rectangle

    fig, ax = plt.subplots(figsize=(8, 6))
    xs = [p.cost_share for p in points if p.cost_share is not None and p.useful is not None]
    ys = [p.useful for p in points if p.cost_share is not None and p.useful is not None]
    ax.step(xs, ys, "o-", where="post", markersize=3, label="min-cut over λ, planned (exact)")
    for s in summary:
        if (
            s["event_type"] == "all"
            and s["work_share"] is not None
            and s["useful_looks"] is not None
        ):
            ax.plot([s["work_share"]], [s["useful_looks"]], "k^")
            ax.annotate(
                s["system"],
                (s["work_share"], s["useful_looks"]),
                fontsize=9,
                xytext=(5, -12),
                textcoords="offset points",
            )
    paper = "paper: 91.1-94.3% at 0.57-0.76"
    ax.add_patch(Rectangle((0.57, 0.911), 0.19, 0.032, alpha=0.2, label=paper))
    ax.axhline(TARGET_USEFUL, ls=":", c="grey")
    ax.axvline(TARGET_SECONDS, ls=":", c="grey")
    ax.set_xlabel("seconds of repair work (Repair-all = 1): measured (points), planned (line)")
    ax.set_ylabel("useful recovery by look-up")
    ax.set_title("BFCL multi-turn as a deployment: cost vs useful recovery")
    ax.set_xlim(-0.05, 1.1)
    ax.set_ylim(-0.05, 1.1)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=9, loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=150)
    plt.close(fig)


# --------------------------------------------------------------------------- main


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m bench.bfcl.eval",
        description="MemoRepair on BFCL multi-turn tool use, run as a deployment: one memory "
        "per system, a warm-up period of use, a first round of events, then measured rounds.",
    )
    parser.add_argument(
        "--tasks", type=int, default=DEFAULT_TASKS, help="tasks per category (0: all)"
    )
    parser.add_argument(
        "--categories",
        default="multi_turn_base",
        help="comma-separated BFCL categories, each its own memory "
        f"({', '.join(MULTI_TURN_CATEGORIES)}; single-turn ones have no back-ends to replay "
        "and are refused) (%(default)s)",
    )
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help="timeline seed")
    parser.add_argument(
        "--first",
        type=int,
        default=DEFAULT_FIRST,
        help="events per type in the first round (%(default)s)",
    )
    parser.add_argument(
        "--per-type",
        type=int,
        default=DEFAULT_PER_TYPE,
        help="events per type per measured round (%(default)s)",
    )
    parser.add_argument(
        "--rounds", type=int, default=DEFAULT_ROUNDS, help="measured rounds (%(default)s)"
    )
    parser.add_argument(
        "--warmup",
        type=int,
        default=DEFAULT_WARMUP,
        help="look-ups of the warm-up period (%(default)s)",
    )
    parser.add_argument(
        "--workload", type=int, default=DEFAULT_SIZE, help="look-ups after each event (%(default)s)"
    )
    parser.add_argument(
        "--lambdas",
        default="",
        help="also min-cut at these λ, comma-separated (each its own memory)",
    )
    parser.add_argument("--ablation", action="store_true", help="also greedy at the default λ")
    parser.add_argument(
        "--full",
        action="store_true",
        help=f"every conforming task of all four multi-turn categories, {FULL_PER_TYPE} events "
        "per type per measured round (long: see docs/evaluation.md)",
    )
    parser.add_argument("--ns", default="bench-bfcl", help="namespace prefix (cleared)")
    parser.add_argument(
        "--out", type=Path, default=Path("bench-out/bfcl"), help="output folder (%(default)s)"
    )
    parser.add_argument("--quiet", action="store_true", help="no per-event progress lines")
    return parser


def _namespace(prefix: str, category: str, system: System) -> str:
    short = category.replace("multi_turn_", "")
    return f"{prefix}-{short}-{system.name}".replace("@", "-")


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.full:
        args.categories = ",".join(MULTI_TURN_CATEGORIES)
        args.tasks, args.per_type = 0, FULL_PER_TYPE
    names = [c.strip() for c in args.categories.split(",") if c.strip()]
    for name in names:
        load_tasks(name)  # a single-turn or unknown category is refused before any work
    chosen = systems([float(x) for x in args.lambdas.split(",") if x.strip()], args.ablation)
    started = time.perf_counter()
    args.out.mkdir(parents=True, exist_ok=True)
    categories = [build_category(name, args) for name in names]
    # Recorded use is written when the harness flushes it (after each workload), and
    # "never read" counts at once: the warm-up stands for the history. Look-ups are by
    # uid, so nothing is embedded.
    settings = load_settings(use_flush_s=3600.0, value_warmup_h=0.0, embeddings=False)
    rows: list[EventRow] = []
    planned: list[PlannedEvent] = []
    with open_store(ns=args.ns, settings=settings) as root:
        root.apply_schema()
        every_task = [t for c in categories for t in c.memory.tasks]
        prepare(root, every_task, [e for c in categories for r in c.rounds for e in r])
        for cat in categories:
            part, plans = run_category(root, cat, chosen, args)
            rows += part
            planned += plans
        lam = root.config.lam
    report(rows, planned, lam, args.out, time.perf_counter() - started)
    return 0


def run_category(
    root: MemoryStore, cat: Category, chosen: Sequence[System], args: argparse.Namespace
) -> tuple[list[EventRow], list[PlannedEvent]]:
    """One category's timeline under every system, each in a namespace of its own."""
    events = sum(len(r) for r in cat.rounds)
    print(
        f"BFCL {cat.name}: {len(cat.memory.tasks)} tasks, {len(cat.memory.artifacts)} "
        f"artifacts; {events} events in {len(cat.rounds)} rounds (first + "
        f"{len(cat.rounds) - 1} measured) x {len(chosen)} systems; "
        f"load {os.getloadavg()[0]:.1f}",
        flush=True,
    )
    deployments = [
        Deployment(
            root.namespace(_namespace(args.ns, cat.name, s)), cat.memory, s, cat.weights, cat.name
        )
        for s in chosen
    ]
    log = None if args.quiet else sys.stderr
    try:
        rows = run_timeline(deployments, cat.warmup, cat.rounds, args.workload, log)
        planned = next(d.planned for d in deployments if d.system == DEFAULT)
    finally:
        for d in deployments:
            d.store.flush_use()
            d.store.clear()
    return rows, planned


def report(
    rows: Sequence[EventRow], planned: Sequence[PlannedEvent], lam: float, out: Path, seconds: float
) -> None:
    """The tables, the target, the frontier and the bound on stdout; the files in ``out``."""
    summary = summarise(rows)
    print(format_table(summary))
    for line in undefined_lines(summary) or ["  no event with an undefined ratio"]:
        print(line)
    failures = failure_lines(rows)
    print(
        "Repair-all's failures in the measured rounds:"
        if failures
        else "Repair-all: no failure in the measured rounds"
    )
    for line in failures:
        print(line)
    for line in target_lines(summary, rows, lam):
        print(line)
    for line in kind_lines(rows):
        print(line)
    points = frontier_points(planned)
    for line in frontier_lines(points, lam):
        print(line)
    lines, _ = bound_lines(planned)
    for line in lines:
        print(line)
    write_rows(rows, out / "results.csv")
    write_rows(summary, out / "summary.csv")
    if points:
        write_rows([asdict(p) for p in points], out / "frontier.csv")
        plot(points, summary, out / "frontier.png")
    print(
        f"wrote results.csv, summary.csv, frontier.csv and frontier.png to {out} in {seconds:.0f}s "
        f"(load average {os.getloadavg()[0]:.1f})"
    )


if __name__ == "__main__":
    sys.exit(main())
