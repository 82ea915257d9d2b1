"""A tiny BFCL deployment against the real Neo4j: the harness's claims hold end to end.

Six BFCL tasks; a warm-up period of use, a first round of one event per type, one
measured round of one per type; each system in a namespace of its own, the post-event
look-ups through the serving read (``MemoryStore.retrieve``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

import pytest

pytest.importorskip(
    "bfcl_eval",
    reason="BFCL is not installed: `pip install --no-deps bfcl-eval` and the bench extra "
    "(`pip install -e '.[bench]'`) run this test",
)
pytest.importorskip("mpmath", reason="mpmath (bench extra, used by BFCL's MathAPI) missing")

from bench.bfcl.bound import frontier_bound, weighted_closure
from bench.bfcl.builder import build_memory
from bench.bfcl.eval import prepare, summarise
from bench.bfcl.events import timeline_events
from bench.bfcl.timeline import DEFAULT, Deployment, run_timeline, systems
from bench.bfcl.workload import popularity, pre_workload

from memorepair.api import MemoryStore


@pytest.fixture
def deployments(memory: MemoryStore) -> Iterator[list[Deployment]]:
    bench = build_memory(6)
    weights = popularity(bench, 7)
    chosen = systems([400.0])
    made = [
        Deployment(memory.namespace(f"{memory.ns}-{i}"), bench, s, weights, "base")
        for i, s in enumerate(chosen)
    ]
    try:
        yield made
    finally:
        for d in made:
            d.store.clear()


def test_tiny_deployment(deployments: list[Deployment]) -> None:
    root = deployments[0].store
    bench = deployments[0].memory
    rounds = timeline_events(bench, seed=7, first=1, per_type=1, rounds=1, ns=root.ns)
    prepare(root, bench.tasks, [e for r in rounds for e in r])
    warmup = pre_workload(bench, deployments[0].weights, 64, 7)
    rows = run_timeline(deployments, warmup, rounds, 24)
    assert len(rows) == 6 * len(deployments)  # every event under every system, in turn
    by = {(r.event, r.system): r for r in rows}
    for event in (e for r in rounds for e in r):
        none, everything, default = (by[event.spec.id, s] for s in ("none", "all", "mincut"))
        for row in (everything, default, by[event.spec.id, "mincut@400"]):
            assert row.exposure == 0.0, row  # the barrier holds under every selection
            assert row.published <= row.runnable and row.failed == 0, row  # no operator gap
        assert everything.published == everything.runnable  # Repair-all: everything
        assert everything.recovered == 1.0 and none.published == 0
        assert default.lam == deployments[0].store.config.lam  # the settings' λ
        assert default.looks_hit <= default.looks_eligible <= default.lookups
    assert any(by[e.spec.id, "none"].exposure > 0 for r in rounds for e in r)
    # The measured round, pooled: what the default published is what its plans said.
    summary = {s["system"]: s for s in summarise(rows) if s["event_type"] == "all"}
    assert summary["all"]["work_share"] == 1.0 and summary["all"]["useful_looks"] == 1.0
    planned = next(d.planned for d in deployments if d.system == DEFAULT)
    assert [p.event for p in planned] == [e.spec.id for e in rounds[1]]
    for p in planned:
        (step,) = [s for s in p.frontier["steps"] if s["default"]]
        assert step["selected"] == by[p.event, "mincut"].selected
    # No selection beats the bound, at the default's own planned cost share.
    looks = sum(sum(p.looks.values()) for p in planned)
    cost = sum(p.frontier["repair_all_cost"] for p in planned)
    if looks and cost:
        closures = [
            weighted_closure(p.event, p.family, _shares(p.looks, looks), 1 / cost) for p in planned
        ]
        default = summary["mincut"]
        b = frontier_bound(closures, default["plan_share"], default["useful_looks"], pooled=True)
        assert default["useful_looks"] <= b.recovered_max + 1e-9
        assert default["plan_share"] >= b.cost_min - 1e-9


def _shares(looks: Mapping[str, int], total: int) -> dict[str, float]:
    return {uid: n / total for uid, n in looks.items()}
