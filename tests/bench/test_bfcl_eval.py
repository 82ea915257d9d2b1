"""A tiny BFCL evaluation against the real Neo4j: the harness's claims hold end to end.

Six BFCL tasks, one event per type (delete, correct, migrate), each fired under the
no-cascade baseline, Repair-all and the min-cut selection, with the post-event
retrievals going through the serving read (``MemoryStore.retrieve``).
"""

from __future__ import annotations

import pytest

pytest.importorskip(
    "bfcl_eval",
    reason="BFCL is not installed: `pip install --no-deps bfcl-eval` and the bench extra "
    "(`pip install -e '.[bench]'`) run this test",
)
pytest.importorskip("mpmath", reason="mpmath (bench extra, used by BFCL's MathAPI) missing")

from bench.bfcl.bound import bound
from bench.bfcl.builder import build_memory
from bench.bfcl.eval import System, evaluate
from bench.bfcl.events import generate_events

from memorepair.api import MemoryStore


def test_tiny_bfcl_evaluation(memory: MemoryStore) -> None:
    bench = build_memory(6)
    events = generate_events(bench, seed=7, per_type=1)
    assert sorted(e.spec.type.value for e in events) == ["correct", "delete", "migrate"]
    only = [
        System("none", "none"),
        System("all", "all"),
        System("mincut[kind]@0.5", "mincut", 0.5),
        System("mincut[use]@0.5", "mincut", 0.5, values="use"),
    ]
    result = evaluate(memory, bench, events, only=only, size=24, pre=64)
    by = {(r.event, r.system): r for r in result.rows}
    assert len(by) == len(events) * len(only)
    for event in events:
        none, full, mincut, learned = (by[event.spec.id, s.name] for s in only)
        assert learned.exposure == 0.0 and learned.values == "use", (event.spec.id, learned)
        assert full.useful == 1.0 or full.looked_up == 0, (event.spec.id, full)
        assert mincut.exposure == 0.0, (event.spec.id, mincut)
        assert full.exposure == 0.0, (event.spec.id, full)
        assert none.exposure > 0.0, (event.spec.id, none)
        assert full.published > 0 and full.recovered == 1.0, (event.spec.id, full)
        assert mincut.cost_norm is not None and mincut.cost_norm <= 1.0, (event.spec.id, mincut)
        assert none.published == 0 and none.recovered == 0.0

    # The bound holds for the measured runs: each event's Repair-all problem is there, no
    # selection published what Repair-all did not, and no measured mean lies above it.
    assert sorted(c.event for c in result.closures) == sorted(e.spec.id for e in events)
    assert result.outside == []
    for system in only:
        runs = [by[e.spec.id, system.name] for e in events]
        recovered = sum(r.recovered or 0.0 for r in runs) / len(runs)
        cost = sum(r.cost_norm or 0.0 for r in runs) / len(runs)
        b = bound(result.closures, budget=cost, level=recovered)
        assert recovered <= b.recovered_max + 1e-9, (system.name, recovered, b)
        assert cost >= b.cost_min - 1e-9, (system.name, cost, b)
