"""A chain-heavy migrate's execution time (prints figures; asserts nothing).

The BFCL memory's migrate event whose cascade holds the most chain skills is repaired
with Repair-all on a freshly imported memory, ``--repeats`` times. Printed per run: the
execution step's seconds (building and validating every successor, `RepairReport.seconds`),
and each kind's measured operator seconds (the successors' ``work_s``: sum and median),
with the load average beside them: the machine is shared, so compare runs made together.

Run: ``python -m bench.bfcl.chain_migrate [--tasks 48] [--repeats 3]`` against the
configured Neo4j (the bench extra installed).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Sequence

from bench.bfcl.builder import Memory, build_memory
from bench.bfcl.eval import prepare
from bench.bfcl.events import BenchEvent, generate_events
from bench.bfcl.graph import cascade, influence_children
from memorepair.api import MemoryStore, open_store
from memorepair.settings import load_settings


def chain_heaviest(memory: Memory, events: Sequence[BenchEvent]) -> tuple[BenchEvent, int]:
    """The migrate event with the most chain skills in its cascade, and that count."""
    children = influence_children(memory.artifacts, memory.edges)
    chains = {a.uid for a in memory.artifacts if a.arch is not None and a.arch.value == "chain"}
    counted = [
        (len(chains & cascade(children, e.spec.roots)), e)
        for e in events
        if e.spec.type.value == "migrate"
    ]
    count, event = max(counted, key=lambda pair: pair[0])
    return event, count


def repair_once(store: MemoryStore, memory: Memory, event: BenchEvent) -> dict[str, object]:
    """Repair-all of ``event`` on a fresh import: execution seconds and work per kind."""
    store.clear()
    store.import_items(memory.items())
    started = time.perf_counter()
    report = store.repair(event.spec.model_copy(update={"ns": store.ns}), selector="all")
    total = time.perf_counter() - started
    work: dict[str, list[float]] = defaultdict(list)
    for artifacts in store.audit_event(event.spec.id).values():
        for a in artifacts:
            if a.get("work_s") is not None:
                arch = "/chain" if "/chain/" in str(a["uid"]) else ""
                work[f"{a['kind']}{arch}"].append(float(a["work_s"]))
    return {
        "execution": report.seconds.get("execution", 0.0) + report.seconds.get("validation", 0.0),
        "total": total,
        "published": len(report.published),
        "failed": len(report.outcomes.get("failed", [])),
        "work": dict(work),
        "load": os.getloadavg()[0],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.bfcl.chain_migrate", description=__doc__)
    parser.add_argument("--tasks", type=int, default=48, help="BFCL tasks in memory")
    parser.add_argument("--repeats", type=int, default=3, help="repairs of the event")
    parser.add_argument("--ns", default="bench-chain-migrate", help="namespace (cleared)")
    args = parser.parse_args(argv)
    memory = build_memory(args.tasks)
    events = generate_events(memory, seed=7, per_type=3, ns=args.ns)
    event, chains = chain_heaviest(memory, events)
    print(f"{event.spec.id}: {event.spec.reason}; {chains} chain skills in its cascade")
    settings = load_settings(embeddings=False)
    with open_store(ns=args.ns, settings=settings) as store:
        store.apply_schema()
        prepare(store, memory.tasks, events)
        try:
            for k in range(args.repeats):
                run = repair_once(store, memory, event)
                work = run["work"]
                assert isinstance(work, dict)
                print(
                    f"run {k + 1}: execution {run['execution']:.2f}s (repair {run['total']:.2f}s), "
                    f"published {run['published']}, failed {run['failed']}, load {run['load']:.1f}"
                )
                for kind, seconds in sorted(work.items()):
                    print(
                        f"  {kind:<12} n={len(seconds):<4} sum {sum(seconds):7.3f}s  "
                        f"median {statistics.median(seconds):.4f}s"
                    )
        finally:
            store.clear()
    return 0


if __name__ == "__main__":
    sys.exit(main())
