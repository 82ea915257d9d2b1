"""The evaluation harness: every event under every system, then SPEC §7's figures.

For each event and system the namespace is cleared, the memory imported, the BFCL
back-ends registered (a migration's tool through its ``MigratedBackend``), the event
fired, and a seeded retrieval workload run. Figures: exposure, availability, validated
successors recovered relative to Repair-all, operator cost normalised by Repair-all's,
objective value. Output: a table on stdout, ``results.csv`` and ``cost_vs_recovered.png``.

Run: ``PYTHONPATH=engine python -m memorepair.bench.bfcl.eval --out bench-out/bfcl``.
Needs the engine's Python API (``memorepair.api.open_store``) and a Neo4j server.
"""

from __future__ import annotations

import argparse
import csv
import importlib
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Protocol

from memorepair.bench.bfcl.backends import BfclBackend, MigratedBackend
from memorepair.bench.bfcl.builder import (
    DEFAULT_TASKS,
    IMPORT_VERSION,
    Memory,
    build_memory,
    make_backends,
)
from memorepair.bench.bfcl.events import DEFAULT_PER_TYPE, DEFAULT_SEED, BenchEvent, generate_events
from memorepair.bench.bfcl.executors import rewrite_call_record
from memorepair.bench.bfcl.graph import cascade, influence_children
from memorepair.bench.bfcl.metrics import ExposureCheck, Served, availability, exposure, ratio
from memorepair.bench.bfcl.workload import DEFAULT_SIZE, workload
from memorepair.model import Artifact, ArtifactIn, EdgeIn, RepairEventSpec

MAIN_LAMBDAS = (0.25, 0.5, 1.0)
SWEEP_LAMBDAS = (0.0, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0)


class RepairReport(Protocol):
    withdrawn: list[str]
    published: list[str]
    removed: list[str]
    failed: list[str]
    selected: list[str]
    objective: float
    repair_value: float
    cost: float
    executed_cost: float


class Store(Protocol):
    """The part of ``memorepair.api.MemoryStore`` the harness uses."""

    def clear(self) -> Any: ...
    def import_items(self, items: Sequence[ArtifactIn | EdgeIn]) -> Any: ...
    def register_backend(self, backend: Any) -> Any: ...
    def repair(
        self, event: RepairEventSpec, *, selector: str, lam: float | None = None
    ) -> RepairReport: ...
    def retrieve(self, *, uid: str, limit: int = 1) -> list[Artifact]: ...


@dataclass(frozen=True)
class System:
    name: str
    selector: str
    lam: float | None = None
    sweep: bool = False


def systems(sweep: bool = True) -> list[System]:
    out = [System("none", "none"), System("all", "all")]
    out += [System(f"greedy@{lam}", "greedy", lam) for lam in MAIN_LAMBDAS]
    out += [System(f"mincut@{lam}", "mincut", lam) for lam in MAIN_LAMBDAS]
    if sweep:
        out += [
            System(f"mincut@{lam}", "mincut", lam, sweep=True)
            for lam in SWEEP_LAMBDAS
            if lam not in MAIN_LAMBDAS
        ]
    return out


@dataclass
class Row:
    event: str
    event_type: str
    system: str
    selector: str
    lam: float | None
    sweep: bool
    cascade: int
    withdrawn: int
    selected: int
    published: int
    failed: int
    removed: int
    exposure: float
    availability: float
    recovered: float | None
    cost_norm: float | None
    executed_cost: float
    objective: float
    seconds: float


def register_backends(store: Store, memory: Memory, event: BenchEvent) -> None:
    """The BFCL back-ends with every task's scenario; a migrated tool serves its new API."""
    for name, backend in make_backends(memory.tasks).items():
        served: BfclBackend | MigratedBackend = backend
        if event.migration is not None and event.migration.tool == name:
            served = MigratedBackend(backend, event.migration)
        store.register_backend(served)
    register_executor = getattr(store, "register_executor", None)
    if register_executor is not None:  # call records replay through the bench executor
        register_executor("bfcl.rewrite_call", rewrite_call_record)


def _served(artifact: Artifact) -> Served:
    return Served(artifact.uid, artifact.version, tuple(artifact.inputs))


def run_one(
    store: Store, memory: Memory, event: BenchEvent, system: System, size: int
) -> tuple[Row, set[str]]:
    """One (event, system) run; also returns the published uids (for recovery ratios)."""
    start = time.perf_counter()
    store.clear()
    store.import_items(memory.items())
    register_backends(store, memory, event)
    report = store.repair(event.spec, selector=system.selector, lam=system.lam)
    cas = cascade(influence_children(memory.artifacts, memory.edges), event.spec.roots)

    def live(uid: str) -> Served | None:
        found = store.retrieve(uid=uid, limit=1)
        return _served(found[0]) if found else None

    check = ExposureCheck(dict.fromkeys(cas, IMPORT_VERSION), live)
    retrievals = []
    for uid in workload(memory, cas, event.spec.id, size):
        found = live(uid)
        retrievals.append([found] if found else [])
    row = Row(
        event=event.spec.id,
        event_type=event.spec.type.value,
        system=system.name,
        selector=system.selector,
        lam=system.lam,
        sweep=system.sweep,
        cascade=len(cas),
        withdrawn=len(report.withdrawn),
        selected=len(report.selected),
        published=len(report.published),
        failed=len(report.failed),
        removed=len(report.removed),
        exposure=exposure(retrievals, check),
        availability=availability(retrievals),
        recovered=None,
        cost_norm=None,
        executed_cost=float(report.executed_cost),
        objective=float(report.objective),
        seconds=time.perf_counter() - start,
    )
    return row, set(report.published)


def evaluate(
    store: Store,
    memory: Memory,
    events: Sequence[BenchEvent],
    *,
    sweep: bool = True,
    size: int = DEFAULT_SIZE,
) -> list[Row]:
    """Every event under every system; ratios relative to the same event's Repair-all."""
    rows: list[Row] = []
    for event in events:
        runs = [run_one(store, memory, event, s, size) for s in systems(sweep)]
        all_row, all_published = next((r, p) for r, p in runs if r.selector == "all")
        for row, published in runs:
            row.recovered = ratio(len(published & all_published), len(all_published))
            row.cost_norm = ratio(row.executed_cost, all_row.executed_cost)
            rows.append(row)
    return rows


def _mean(values: Sequence[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return statistics.fmean(known) if known else None


def summarise(rows: Sequence[Row]) -> list[dict[str, Any]]:
    """Mean figures per (system, event type) and per system over all events."""
    out: list[dict[str, Any]] = []
    names = list(dict.fromkeys(r.system for r in rows))
    for event_type in [*sorted({r.event_type for r in rows}), "all"]:
        for name in names:
            group = [r for r in rows if r.system == name and event_type in ("all", r.event_type)]
            if group:
                out.append(
                    {
                        "event_type": event_type,
                        "system": name,
                        "lam": group[0].lam,
                        "events": len(group),
                        "exposure": _mean([r.exposure for r in group]),
                        "availability": _mean([r.availability for r in group]),
                        "recovered": _mean([r.recovered for r in group]),
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
        "cost_norm",
        "objective",
    ]

    def cell(v: Any) -> str:
        return "-" if v is None else f"{v:.3f}" if isinstance(v, float) else str(v)

    table = [cols, *[[cell(s[c]) for c in cols] for s in summary]]
    widths = [max(len(r[i]) for r in table) for i in range(len(cols))]
    return "\n".join("  ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)) for r in table)


def write_csv(rows: Sequence[Row], path: Path) -> None:
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=list(asdict(rows[0])))
        writer.writeheader()
        writer.writerows(asdict(r) for r in rows)


def plot(summary: Sequence[dict[str, Any]], path: Path) -> None:
    """Cost vs recovered per system (means over all events); the λ sweep as a line."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    overall = [s for s in summary if s["event_type"] == "all" and s["cost_norm"] is not None]
    fig, ax = plt.subplots(figsize=(6, 4.5))
    for prefix, marker in (("mincut", "o-"), ("greedy", "s--")):
        line = sorted(
            (s for s in overall if s["system"].startswith(prefix)), key=lambda s: s["lam"]
        )
        if line:
            ax.plot(
                [s["cost_norm"] for s in line], [s["recovered"] for s in line], marker, label=prefix
            )
            for s in line:
                ax.annotate(f"λ={s['lam']:g}", (s["cost_norm"], s["recovered"]), fontsize=7)
    for s in overall:
        if s["system"] in ("none", "all"):
            ax.plot([s["cost_norm"]], [s["recovered"]], "k^", label=s["system"])
            ax.annotate(s["system"], (s["cost_norm"], s["recovered"]), fontsize=8)
    ax.set_xlabel("normalised repair-operator cost (Repair all = 1)")
    ax.set_ylabel("validated successors recovered (Repair all = 1)")
    ax.set_title("BFCL multi-turn: cost vs recovered")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=150)
    plt.close(fig)


def open_store(ns: str) -> Store:
    """The engine's store (imported late: the API module lands separately)."""
    api = importlib.import_module("memorepair.api")
    store: Store = api.open_store(ns=ns)
    return store


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="memorepair-bench-bfcl", description=__doc__)
    parser.add_argument("--tasks", type=int, default=DEFAULT_TASKS)
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--per-type", type=int, default=DEFAULT_PER_TYPE)
    parser.add_argument("--workload", type=int, default=DEFAULT_SIZE)
    parser.add_argument("--ns", default="bench")
    parser.add_argument("--no-sweep", action="store_true")
    parser.add_argument("--out", type=Path, default=Path("bench-out/bfcl"))
    args = parser.parse_args(argv)
    memory = build_memory(args.tasks)
    events = generate_events(memory, seed=args.seed, per_type=args.per_type, ns=args.ns)
    args.out.mkdir(parents=True, exist_ok=True)
    store = open_store(args.ns)
    rows = evaluate(store, memory, events, sweep=not args.no_sweep, size=args.workload)
    summary = summarise(rows)
    print(format_table(summary))
    write_csv(rows, args.out / "results.csv")
    plot(summary, args.out / "cost_vs_recovered.png")
    print(f"wrote {args.out / 'results.csv'} and {args.out / 'cost_vs_recovered.png'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
