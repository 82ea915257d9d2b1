"""The recovery bound is a true bound: never below what some closed selection achieves."""

from __future__ import annotations

import itertools
import random

import pytest
from bench.bfcl.bound import EventClosure, bound, frontier_bound

from memorepair.selection import SelectionProblem


def closed_sets(problem: SelectionProblem) -> list[tuple[float, float]]:
    """(recovery, cost) of every feasible selection, by enumeration."""
    n = len(problem.weights)
    out = []
    for mask in itertools.product((False, True), repeat=n):
        if any(x and not problem.executable[i] for i, x in enumerate(mask)):
            continue
        if any(mask[i] and not mask[j] for j, i in problem.requires):
            continue
        chosen = [i for i in range(n) if mask[i]]
        out.append((sum(problem.weights[i] for i in chosen), sum(problem.costs[i] for i in chosen)))
    return out


def random_event(rng: random.Random, n: int) -> EventClosure:
    requires = [(j, i) for i in range(n) for j in range(i) if rng.random() < 0.3]
    published = [rng.random() < 0.8 for _ in range(n)]
    share = 1 / max(1, sum(published))
    raw = [rng.choice((0.5, 1.0, 2.0, 6.0)) for _ in range(n)]
    return EventClosure(
        "e",
        SelectionProblem(
            weights=[share if p else 0.0 for p in published],
            costs=[c / sum(raw) for c in raw],
            executable=[rng.random() < 0.9 for _ in range(n)],
            requires=requires,
        ),
    )


@pytest.mark.parametrize("seed", range(12))
def test_bound_is_never_below_the_best_pair_of_closed_selections(seed: int) -> None:
    rng = random.Random(seed)
    events = [random_event(rng, rng.randint(2, 7)) for _ in range(2)]
    budget, level = 0.6, 0.95
    options = [closed_sets(e.problem) for e in events]
    pairs = [(ra + rb, ca + cb) for (ra, ca), (rb, cb) in itertools.product(*options)]
    best = max(r / 2 for r, c in pairs if c / 2 <= budget + 1e-12)
    cheapest = min((c / 2 for r, c in pairs if r / 2 >= level - 1e-12), default=None)

    b = bound(events, budget, level)

    assert b.recovered_max >= best - 1e-9
    if cheapest is not None:
        assert b.cost_min <= cheapest + 1e-9


def test_bound_is_tight_when_costs_are_uniform_and_nothing_is_required() -> None:
    event = EventClosure("e", SelectionProblem([0.25] * 4, [0.25] * 4, [True] * 4, []))
    b = bound([event], 0.5, 0.95)
    assert b.recovered_max == pytest.approx(0.5, abs=1e-6)
    assert b.cost_min == pytest.approx(0.95, abs=1e-6)


def test_bound_rules_out_recovery_an_expensive_requirement_blocks() -> None:
    # Half the recovery needs a candidate costing 90% of Repair-all; the rest requires it.
    event = EventClosure("e", SelectionProblem([0.5, 0.5], [0.9, 0.1], [True, True], [(0, 1)]))
    b = bound([event], 0.6, 0.95)
    assert b.recovered_max == pytest.approx(0.6, abs=1e-6)  # truth is 0; any bound >= 0
    assert b.recovered_max < 0.95
    assert b.cost_min >= 0.95 - 1e-6


@pytest.mark.parametrize("seed", range(12))
def test_frontier_bound_is_exact_over_multipliers_and_never_below_the_truth(seed: int) -> None:
    """Minimised over every multiplier, the dual is at least as tight as on the grid and
    still a bound; pooled (sums of shares) it bounds the sum over events."""
    rng = random.Random(seed)
    events = [random_event(rng, rng.randint(2, 7)) for _ in range(2)]
    options = [closed_sets(e.problem) for e in events]
    pairs = [(ra + rb, ca + cb) for (ra, ca), (rb, cb) in itertools.product(*options)]
    grid, exact = bound(events, 0.6, 0.95), frontier_bound(events, 0.6, 0.95, pooled=False)
    assert exact.recovered_max <= grid.recovered_max + 1e-9
    assert exact.cost_min >= grid.cost_min - 1e-9
    assert exact.recovered_max >= max(r / 2 for r, c in pairs if c / 2 <= 0.6 + 1e-12) - 1e-9
    cheapest = min((c / 2 for r, c in pairs if r / 2 >= 0.95 - 1e-12), default=None)
    if cheapest is not None:
        assert exact.cost_min <= cheapest + 1e-9
    pooled = frontier_bound(events, 1.2, 1.9, pooled=True)  # sums: twice the budget and level
    assert pooled.recovered_max >= min(1.0, max(r for r, c in pairs if c <= 1.2 + 1e-12)) - 1e-9
    cheapest_sum = min((c for r, c in pairs if r >= 1.9 - 1e-12), default=None)
    if cheapest_sum is not None:
        assert pooled.cost_min <= cheapest_sum + 1e-9


def test_frontier_bound_is_tight_when_costs_are_uniform() -> None:
    event = EventClosure("e", SelectionProblem([0.25] * 4, [0.25] * 4, [True] * 4, []))
    b = frontier_bound([event], 0.5, 0.95)
    assert b.recovered_max == pytest.approx(0.5, abs=1e-6)
    assert b.cost_min == pytest.approx(0.95, abs=1e-6)
