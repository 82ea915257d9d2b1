"""Selection (SPEC §5): exactness against brute force, tie rule, backends, baselines."""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator
from contextlib import contextmanager
from fractions import Fraction
from unittest import mock

import igraph as ig
import numpy as np
import pytest
from bench.selection_bench import cascade_problem
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bench import selection_bench
from memorepair import selection
from memorepair.selection import (
    BACKENDS,
    Selection,
    SelectionProblem,
    scaled_profits,
    select_all,
    select_greedy,
    select_mincut,
    select_sweep,
    solve_closure,
)

LAMS = [0.0, 0.5, 1.0, 2.0, 3.7]
MAX_N = 10


# --------------------------------------------------------------------------- brute force


def on_cycle(n: int, requires: list[tuple[int, int]]) -> list[bool]:
    """Plain transitive closure for small inputs; DAGs (checked by igraph) skip it."""
    if ig.Graph(n=n, edges=requires, directed=True).is_dag():
        return [False] * n
    reach = [[False] * n for _ in range(n)]
    for j, i in requires:
        reach[j][i] = True
    for k in range(n):
        for a in range(n):
            if reach[a][k]:
                for b in range(n):
                    if reach[k][b]:
                        reach[a][b] = True
    return [reach[i][i] for i in range(n)]


def runnable(problem: SelectionProblem) -> list[bool]:
    n = len(problem.weights)
    cyc = on_cycle(n, list(problem.requires))
    return [bool(problem.executable[i]) and not cyc[i] for i in range(n)]


def feasible_subsets(problem: SelectionProblem) -> np.ndarray:
    """All x in {0,1}^n that are closed under requirements and use only runnable candidates."""
    n = len(problem.weights)
    subsets = ((np.arange(2**n)[:, None] >> np.arange(n)) & 1).astype(bool)
    ok = np.ones(len(subsets), dtype=bool)
    for i, r in enumerate(runnable(problem)):
        if not r:
            ok &= ~subsets[:, i]
    for j, i in problem.requires:
        ok &= ~subsets[:, i] | subsets[:, j]
    return subsets[ok]


def smallest_optimal(problem: SelectionProblem, lam: float) -> tuple[tuple[bool, ...], int]:
    """Intersection of all maximum closures (integer profits), asserted to be maximum itself."""
    profits, _ = scaled_profits(problem, lam)
    subsets = feasible_subsets(problem)
    values = subsets.astype(np.int64) @ np.asarray(profits, dtype=np.int64)
    best = int(values.max())
    intersection = subsets[values == best].all(axis=0)
    assert int(intersection.astype(np.int64) @ np.asarray(profits)) == best
    assert (subsets == intersection).all(axis=1).any(), "intersection must be a closure"
    return tuple(intersection.tolist()), best


def is_feasible(problem: SelectionProblem, x: tuple[bool, ...]) -> bool:
    run = runnable(problem)
    return all(run[i] for i in range(len(x)) if x[i]) and all(
        x[j] for j, i in problem.requires if x[i]
    )


def check_selection(problem: SelectionProblem, lam: float, result: Selection) -> None:
    x = result.selected
    assert len(x) == len(problem.weights)
    assert is_feasible(problem, x)
    w = [problem.weights[i] for i in range(len(x)) if x[i]]
    c = [problem.costs[i] for i in range(len(x)) if x[i]]
    assert result.repair == pytest.approx(math.fsum(w))
    assert result.cost == pytest.approx(math.fsum(c))
    assert result.objective == pytest.approx(math.fsum(w) - lam * math.fsum(c), abs=1e-9)


# --------------------------------------------------------------------------- strategies

numbers = st.one_of(
    st.integers(0, 6).map(float),
    st.floats(0, 6, allow_nan=False, allow_infinity=False),
    st.sampled_from([0.1, 0.2, 0.3, 0.7]),
)


@st.composite
def problems(draw: st.DrawFn, *, acyclic: bool = True, max_n: int = MAX_N) -> SelectionProblem:
    n = draw(st.integers(0, max_n))
    if acyclic:
        order = draw(st.permutations(range(n)))
        pairs = [(order[a], order[b]) for a in range(n) for b in range(a + 1, n)]
    else:
        pairs = [(a, b) for a in range(n) for b in range(n)]
    requires = draw(st.lists(st.sampled_from(pairs), unique=True, max_size=2 * n)) if pairs else []
    return SelectionProblem(
        weights=draw(st.lists(numbers, min_size=n, max_size=n)),
        costs=draw(st.lists(numbers, min_size=n, max_size=n)),
        executable=draw(st.lists(st.sampled_from([True, True, False]), min_size=n, max_size=n)),
        requires=requires,
    )


FAST = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])


# --------------------------------------------------------------------------- properties


@settings(FAST, max_examples=2000)
@given(problem=problems(), lam=st.sampled_from(LAMS))
def test_mincut_is_the_smallest_maximum_closure(problem: SelectionProblem, lam: float) -> None:
    expected, best = smallest_optimal(problem, lam)
    profits, exponent = scaled_profits(problem, lam)
    masks = {}
    for backend in ("igraph", "ortools", "auto"):
        result = select_mincut(problem, lam, backend=backend)
        check_selection(problem, lam, result)
        assert result.selected == expected, backend
        masks[backend] = result.selected
        # The float objective is the brute-force optimum up to the rounding resolution.
        chosen = sum(p for p, x in zip(profits, result.selected, strict=True) if x)
        assert chosen == best
        assert result.objective == pytest.approx(best * 10.0**-exponent, abs=len(profits) * 1e-9)
    assert masks["igraph"] == masks["ortools"] == masks["auto"]


@settings(FAST, max_examples=400)
@given(problem=problems(acyclic=False, max_n=7), lam=st.sampled_from(LAMS))
def test_requirement_cycles_are_never_selected(problem: SelectionProblem, lam: float) -> None:
    expected, _ = smallest_optimal(problem, lam)
    for backend in ("igraph", "ortools"):
        assert select_mincut(problem, lam, backend=backend).selected == expected
    for result in (select_greedy(problem, lam), select_all(problem, lam)):
        check_selection(problem, lam, result)


@settings(FAST, max_examples=400)
@given(problem=problems(), lams=st.lists(st.sampled_from(LAMS), min_size=1, max_size=4))
def test_sweep_equals_separate_solves(problem: SelectionProblem, lams: list[float]) -> None:
    for backend in ("igraph", "ortools"):
        sweep = select_sweep(problem, lams, backend=backend)
        assert sweep == [select_mincut(problem, lam, backend=backend) for lam in lams]


def greedy_by_topological_order(problem: SelectionProblem, lam: float) -> tuple[bool, ...]:
    """The documented rule, spelled out: Kahn's order, select if runnable, p > 0, preds in."""
    n = len(problem.weights)
    profits, _ = scaled_profits(problem, lam)
    run = runnable(problem)
    preds: list[list[int]] = [[] for _ in range(n)]
    for j, i in problem.requires:
        preds[i].append(j)
    graph = ig.Graph(n=n, edges=list(problem.requires), directed=True)
    x = [False] * n
    if graph.is_dag():
        for i in graph.topological_sorting():
            x[i] = run[i] and profits[i] > 0 and all(x[j] for j in preds[i])
    return tuple(x)


@settings(FAST, max_examples=500)
@given(problem=problems(), lam=st.sampled_from(LAMS))
def test_greedy_follows_its_rule_and_never_beats_mincut(
    problem: SelectionProblem, lam: float
) -> None:
    greedy = select_greedy(problem, lam)
    check_selection(problem, lam, greedy)
    assert greedy.selected == greedy_by_topological_order(problem, lam)
    assert greedy.backend == "greedy"
    assert greedy.objective <= select_mincut(problem, lam).objective + 1e-6


@settings(FAST, max_examples=500)
@given(problem=problems(), lam=st.sampled_from(LAMS))
def test_select_all_is_the_largest_feasible_set(problem: SelectionProblem, lam: float) -> None:
    result = select_all(problem, lam)
    check_selection(problem, lam, result)
    union = np.asarray(feasible_subsets(problem).any(axis=0), dtype=bool)
    assert result.selected == tuple(union.tolist())
    assert result.backend == "all"


# --------------------------------------------------------------------------- explicit cases


def test_negative_predecessor_unlocks_valuable_successor() -> None:
    # 0: p = 1 - 3 = -2; 1 requires 0: p = 10 - 1 = 9. Together +7.
    problem = SelectionProblem([1.0, 10.0], [3.0, 1.0], [True, True], [(0, 1)])
    for backend in BACKENDS:
        chosen = select_mincut(problem, 1.0, backend=backend)
        assert chosen.selected == (True, True)
        assert chosen.objective == pytest.approx(7.0)
        assert (chosen.repair, chosen.cost) == (11.0, 4.0)
    assert select_greedy(problem, 1.0).selected == (False, False)
    assert select_greedy(problem, 1.0).objective == 0.0


def test_non_executable_predecessor_blocks_its_dependents() -> None:
    # 0 cannot run; 1 and 2 (transitively) need it; 3 is independent.
    problem = SelectionProblem(
        [5.0, 9.0, 9.0, 4.0], [1.0] * 4, [False, True, True, True], [(0, 1), (1, 2)]
    )
    for backend in BACKENDS:
        assert select_mincut(problem, 1.0, backend=backend).selected == (
            False,
            False,
            False,
            True,
        )
    assert select_all(problem, 1.0).selected == (False, False, False, True)
    assert select_greedy(problem, 1.0).selected == (False, False, False, True)


def test_lam_zero_selects_every_feasible_candidate_with_value() -> None:
    # 0 (w=0) is needed by 1 (w>0): costs nothing at λ=0, so it comes along.
    # 2 (w=0) is needed by nobody valuable: a tie, left out. 4 needs non-executable 3.
    problem = SelectionProblem(
        weights=[0.0, 2.0, 0.0, 7.0, 1.0, 3.0],
        costs=[9.0, 9.0, 9.0, 9.0, 9.0, 0.0],
        executable=[True, True, True, False, True, True],
        requires=[(0, 1), (3, 4)],
    )
    expected = (True, True, False, False, False, True)
    for backend in BACKENDS:
        assert select_mincut(problem, 0.0, backend=backend).selected == expected


def test_zero_profit_ties_are_not_selected() -> None:
    # p = 2 - 2*1 = 0 alone; a chain summing to 0; float noise 0.3 - 3*0.1 ~ -5.6e-17.
    problem = SelectionProblem(
        weights=[2.0, 1.0, 3.0, 0.3],
        costs=[1.0, 1.0, 0.5, 0.1],
        executable=[True] * 4,
        requires=[(1, 2)],
    )
    # lam = 2: p = [0, -1, 2, 0.1]; lam = 3: p = [-1, -2, 1.5, ~0]
    assert select_mincut(problem, 2.0).selected == (False, True, True, True)
    for backend in BACKENDS:
        result = select_mincut(problem, 3.0, backend=backend)
        assert result.selected == (False, False, False, False)
    chain = SelectionProblem([0.0, 2.0], [1.0, 1.0], [True, True], [(0, 1)])
    # p = [-1, +1]: including both gains exactly nothing.
    assert select_mincut(chain, 1.0).selected == (False, False)


def test_igraph_own_partition_is_maximal_but_ours_is_minimal() -> None:
    # s -> a -> t with equal capacities: both {s} and {s, a} are minimum cuts.
    graph = ig.Graph(n=3, edges=[(0, 1), (1, 2)], directed=True)
    assert sorted(graph.mincut(0, 2, [1, 1]).partition[0]) == [0, 1]
    for backend in BACKENDS:
        assert solve_closure([0, 1], [1, 2], [1, 1], 0, 2, backend=backend) == [
            True,
            False,
            False,
        ]
        assert BACKENDS[backend]([0, 1], [1, 2], [1, 1], 3, 0, 2) == [True, False, False]


def test_solve_closure_checks_its_arrays() -> None:
    with pytest.raises(ValueError, match=r"capacities\[1\]"):
        solve_closure([0, 1], [1, 2], [1, 0.5], 0, 2, backend="ortools")
    with pytest.raises(ValueError, match=r"capacities\[0\]"):
        solve_closure([0, 1], [1, 2], [-1, 1], 0, 2, backend="igraph")
    with pytest.raises(ValueError, match="equal lengths"):
        solve_closure([0, 1], [1], [1, 1], 0, 2, backend="igraph")
    with pytest.raises(ValueError, match="backend"):
        solve_closure([0], [1], [1], 0, 1, backend="scipy")
    # Isolated terminals and extra nodes are fine.
    assert solve_closure([], [], [], 0, 1, backend="ortools", n_nodes=3) == [True, False, False]


def test_components_solved_separately_match_the_whole() -> None:
    rng = np.random.default_rng(7)
    parts = []
    for _ in range(6):
        k = int(rng.integers(1, 8))
        edges = [(a, b) for a in range(k) for b in range(a + 1, k) if rng.random() < 0.4]
        parts.append(
            SelectionProblem(
                weights=rng.integers(0, 8, k).astype(float).tolist(),
                costs=rng.integers(0, 5, k).astype(float).tolist(),
                executable=(rng.random(k) < 0.9).tolist(),
                requires=edges,
            )
        )
    offset = 0
    weights: list[float] = []
    costs: list[float] = []
    executable: list[bool] = []
    requires: list[tuple[int, int]] = []
    separate: list[bool] = []
    for part in parts:
        weights += part.weights
        costs += part.costs
        executable += part.executable
        requires += [(j + offset, i + offset) for j, i in part.requires]
        separate += select_mincut(part, 1.5).selected
        offset += len(part.weights)
    whole = SelectionProblem(weights, costs, executable, requires)
    # A tiny threshold puts every component in its own batch; a huge one packs them all.
    for threshold in (1, 10**9):
        for backend in ("auto", *BACKENDS):
            result = select_mincut(whole, 1.5, backend=backend, threshold=threshold)
            assert result.selected == tuple(separate)


def test_auto_backend_follows_the_threshold() -> None:
    # p = [-2, 9, 0]: whether to pay for 0 to get 1 is left to a network.
    problem = SelectionProblem([1.0, 10.0, 1.0], [3.0, 1.0, 1.0], [True] * 3, [(0, 1)])
    assert select_mincut(problem, 1.0).backend == "igraph"
    assert select_mincut(problem, 1.0, threshold=3).backend == "ortools"
    assert select_mincut(problem, 1.0).selected == (True, True, False)
    lonely = SelectionProblem([5.0, 0.0], [1.0, 1.0], [True, True], [])
    assert select_mincut(lonely, 1.0).backend == "trivial"
    assert select_mincut(lonely, 1.0).selected == (True, False)
    # p = [4, 4, 0]: the reductions force 0 and 1 in and 2 out, so no network is built.
    settled = SelectionProblem([5.0, 5.0, 1.0], [1.0, 1.0, 1.0], [True] * 3, [(0, 1)])
    assert select_mincut(settled, 1.0, threshold=3).backend == "trivial"
    assert select_mincut(settled, 1.0).selected == (True, True, False)


def test_large_values_use_a_coarser_exact_resolution() -> None:
    n = 200
    rng = np.random.default_rng(3)
    problem = SelectionProblem(
        weights=(rng.random(n) * 1e14).tolist(),
        costs=(rng.random(n) * 1e14).tolist(),
        executable=[True] * n,
        requires=[(i, i + 1) for i in range(n - 1) if i % 3],
    )
    profits, exponent = scaled_profits(problem, 1.0)
    assert exponent < 0
    assert sum(abs(p) for p in profits) < 2**52 + n
    results = {b: select_mincut(problem, 1.0, backend=b) for b in BACKENDS}
    assert results["igraph"].selected == results["ortools"].selected
    assert is_feasible(problem, results["igraph"].selected)


def test_empty_problem() -> None:
    empty = SelectionProblem([], [], [], [])
    for fn in (select_mincut, select_greedy, select_all):
        assert fn(empty, 1.0).selected == ()
    assert select_sweep(empty, [0.0, 1.0])[1].objective == 0.0


@pytest.mark.parametrize(
    ("problem", "lam", "match"),
    [
        (SelectionProblem([1.0], [1.0, 2.0], [True], []), 1.0, "costs has 2"),
        (SelectionProblem([1.0], [1.0], [True, False], []), 1.0, "executable has 2"),
        (SelectionProblem([1.0, -1.0], [1.0, 1.0], [True] * 2, []), 1.0, r"weights\[1\]"),
        (SelectionProblem([1.0], [math.nan], [True], []), 1.0, r"costs\[0\]"),
        (SelectionProblem([math.inf], [1.0], [True], []), 1.0, r"weights\[0\]"),
        (SelectionProblem([1.0, 1.0], [1.0] * 2, [True] * 2, [(0, 2)]), 1.0, r"requires\[0\]"),
        (SelectionProblem([1.0, 1.0], [1.0] * 2, [True] * 2, [(-1, 0)]), 1.0, r"requires\[0\]"),
        (SelectionProblem([1.0, 1.0], [1.0] * 2, [True] * 2, [(0, 1.5)]), 1.0, "requires"),  # type: ignore[list-item]
        (SelectionProblem([1.0], [1.0], [True], [(0,)]), 1.0, "requires"),  # type: ignore[list-item]
        (SelectionProblem([1.0] * 3, [1.0] * 3, [True] * 3, [(0, 1, 2)]), 1.0, "requires"),  # type: ignore[list-item]
        (SelectionProblem([1.0] * 2, [1.0] * 2, [True] * 2, [(0, 1.0)]), 1.0, "integer"),  # type: ignore[list-item]
        (SelectionProblem([1.0] * 2, [1.0] * 2, [True] * 2, [("0", "1")]), 1.0, "integer"),  # type: ignore[list-item]
        (SelectionProblem([1.0] * 2, [1.0] * 2, [True] * 2, [(2**70, 1)]), 1.0, "integer"),
        (SelectionProblem([1.0] * 2, [1.0] * 2, [True] * 2, [0, 1]), 1.0, "pairs"),  # type: ignore[list-item]
        (SelectionProblem([1.0], [1.0], [True], []), -0.5, "lam"),
        (SelectionProblem([1.0], [1.0], [True], []), math.nan, "lam"),
        (SelectionProblem([1.0], [1.0], [True], []), math.inf, "lam"),
        (SelectionProblem([1.0], [1e10], [True], []), 1e6, "lam \\* max\\(costs\\)"),
    ],
)
def test_bad_input_names_the_field(problem: SelectionProblem, lam: float, match: str) -> None:
    for fn in (select_mincut, select_greedy, select_all, scaled_profits):
        with pytest.raises(ValueError, match=match):
            fn(problem, lam)
    with pytest.raises(ValueError, match=match):
        select_sweep(problem, [0.0, lam])


def test_unknown_backend_is_rejected() -> None:
    problem = SelectionProblem([1.0], [1.0], [True], [])
    with pytest.raises(ValueError, match="'networkx'"):
        select_mincut(problem, 1.0, backend="networkx")


def test_medium_instance_backends_agree_and_sweep_matches() -> None:
    rng = np.random.default_rng(11)
    n = 3000
    j = rng.integers(0, n, 4 * n)
    i = rng.integers(0, n, 4 * n)
    lo, hi = np.minimum(i, j), np.maximum(i, j)
    keep = lo != hi
    problem = SelectionProblem(
        weights=np.round(rng.random(n) * 10, 3).tolist(),
        costs=np.round(rng.random(n) * 5, 3).tolist(),
        executable=(rng.random(n) < 0.95).tolist(),
        requires=list(zip(lo[keep].tolist(), hi[keep].tolist(), strict=True)),
    )
    lams = [0.0, 1.0, 2.5]
    sweeps = {b: select_sweep(problem, lams, backend=b) for b in BACKENDS}
    assert [s.selected for s in sweeps["igraph"]] == [s.selected for s in sweeps["ortools"]]
    for lam, result in zip(lams, sweeps["ortools"], strict=True):
        assert result == select_mincut(problem, lam, backend="ortools")
        assert is_feasible(problem, result.selected)
        assert select_greedy(problem, lam).objective <= result.objective + 1e-6


# --------------------------------------------------------------------------- exact reductions
#
# select_mincut settles most candidates before any network: blocked ones are out, alive ones
# with no positive alive descendant-or-self are out, positive ones whose ancestor closure is
# all p >= 0 are in with that closure. The checks below compare the reduced solver with the
# whole, unreduced Picard network and with brute force, on both requirement-graph paths
# (level sweeps and the igraph fallback for deep graphs).


def reach_matrix(n: int, requires: list[tuple[int, int]]) -> np.ndarray:
    """reach[a, b]: b transitively requires a (a path a -> b of one or more arcs)."""
    reach = np.zeros((n, n), dtype=bool)
    for j, i in requires:
        reach[j, i] = True
    for k in range(n):
        reach |= reach[:, k : k + 1] & reach[k : k + 1, :]
    return reach


def scc_runnable(problem: SelectionProblem) -> list[bool]:
    """``runnable`` for larger inputs: executable and in a one-candidate, loop-free SCC."""
    n = len(problem.weights)
    graph = ig.Graph(n=n, edges=list(problem.requires), directed=True)
    sizes = [len(c) for c in graph.connected_components(mode="strong")]
    member = graph.connected_components(mode="strong").membership
    loops = {j for j, i in problem.requires if j == i}
    return [
        bool(problem.executable[v]) and sizes[member[v]] == 1 and v not in loops for v in range(n)
    ]


def unreduced_mincut(
    problem: SelectionProblem, lam: float, backend: str, run: list[bool] | None = None
) -> tuple[bool, ...]:
    """Picard's network for the whole problem in one min-cut, built without the library."""
    n = len(problem.weights)
    profits, _ = scaled_profits(problem, lam)
    run = runnable(problem) if run is None else run
    infinity = sum(abs(p) for p, r in zip(profits, run, strict=True) if r) + 1
    s, t = n, n + 1
    tails: list[int] = []
    heads: list[int] = []
    caps: list[int] = []
    for v, (p, r) in enumerate(zip(profits, run, strict=True)):
        tails += [s, v]
        heads += [v, t]
        caps += [max(p, 0), max(-p, 0)] if r else [0, infinity]
    for j, i in problem.requires:
        tails.append(i)
        heads.append(j)
        caps.append(infinity)
    mask = solve_closure(tails, heads, caps, s, t, backend=backend, n_nodes=n + 2)
    return tuple(mask[:n])


@contextmanager
def requirement_path(path: str) -> Iterator[None]:
    """Force the level-sweep analysis or the igraph fallback (as for a very deep graph)."""
    budget = {"levels": lambda n, m: 2**62, "igraph": lambda n, m: 0}[path]
    with mock.patch.object(selection, "level_budget", budget):
        yield


def analysis_path(problem: SelectionProblem) -> str:
    reach = selection.analyse(problem).reach
    return "igraph" if isinstance(reach, selection.GraphReach) else "levels"


PATHS = ("levels", "igraph")

# Small integer weights and costs with λ in {0, 1, 2} make p = 0 common: ties everywhere.
tie_numbers = st.integers(0, 3).map(float)


@st.composite
def tie_problems(draw: st.DrawFn, *, max_n: int = MAX_N) -> SelectionProblem:
    n = draw(st.integers(1, max_n))
    pairs = [(a, b) for a in range(n) for b in range(n)]
    acyclic = draw(st.booleans())
    if acyclic:
        order = draw(st.permutations(range(n)))
        pairs = [(order[a], order[b]) for a in range(n) for b in range(a + 1, n)]
    requires = draw(st.lists(st.sampled_from(pairs), unique=True, max_size=2 * n)) if pairs else []
    return SelectionProblem(
        weights=draw(st.lists(tie_numbers, min_size=n, max_size=n)),
        costs=draw(st.lists(tie_numbers, min_size=n, max_size=n)),
        executable=draw(
            st.lists(st.sampled_from([True, True, True, False]), min_size=n, max_size=n)
        ),
        requires=requires,
    )


any_problem = st.one_of(problems(), problems(acyclic=False, max_n=8), tie_problems())


@settings(FAST, max_examples=1500)
@given(problem=any_problem, lam=st.sampled_from([0.0, 1.0, 2.0, *LAMS]))
def test_reduced_mincut_equals_unreduced_network_and_brute_force(
    problem: SelectionProblem, lam: float
) -> None:
    expected, _ = smallest_optimal(problem, lam)
    for backend in ("igraph", "ortools"):
        assert unreduced_mincut(problem, lam, backend) == expected
    for path in PATHS:
        with requirement_path(path):
            # With no candidate free of requirements there is no level to sweep at all.
            free = set(range(len(problem.weights))) - {i for _, i in problem.requires}
            assert analysis_path(problem) == (path if free else "levels")
            for backend in ("igraph", "ortools", "auto"):
                result = select_mincut(problem, lam, backend=backend)
                assert result.selected == expected, (path, backend)
                check_selection(problem, lam, result)


@settings(FAST, max_examples=800)
@given(problem=any_problem, lam=st.sampled_from([0.0, 1.0, 2.0, 3.7]))
def test_each_reduction_rule_is_exact_and_as_strong_as_stated(
    problem: SelectionProblem, lam: float
) -> None:
    n = len(problem.weights)
    expected = np.asarray(smallest_optimal(problem, lam)[0], dtype=bool)
    p = np.asarray(scaled_profits(problem, lam)[0], dtype=np.int64)
    reach = reach_matrix(n, list(problem.requires))
    below = reach | np.eye(n, dtype=bool)  # below[a, b]: b is a or requires a transitively
    run = np.asarray(runnable(problem), dtype=bool)
    blocked = below[~run].any(axis=0)
    alive = ~blocked
    useful = alive & (below & (alive & (p > 0))[None, :]).any(axis=1)
    clean = alive & ~below[p < 0].any(axis=0)  # no ancestor-or-self has p < 0
    forced = (below & (clean & (p > 0))[None, :]).any(axis=1)
    # The rules' sets are consistent with the smallest optimum...
    assert not (expected & blocked).any()
    assert not (expected & ~useful).any()
    assert (expected >= forced).all()
    # ...and the implementation computes exactly those sets, on both paths.
    for path in PATHS:
        with requirement_path(path):
            an = selection.analyse(problem)
            profits, _ = selection.scaled(an, lam)
            got_forced, rest, _ = selection.exact_reductions(an, profits)
            assert (an.blocked == blocked).all(), path
            assert (an.runnable == run).all(), path
            assert (got_forced == forced).all(), path
            assert (rest == (useful & ~forced)).all(), path


@settings(FAST, max_examples=300)
@given(
    problem=any_problem,
    lams=st.lists(st.sampled_from([0.0, 1.0, 2.0, *LAMS]), min_size=1, max_size=5),
)
def test_sweep_with_reductions_matches_brute_force_at_every_lam(
    problem: SelectionProblem, lams: list[float]
) -> None:
    for path in PATHS:
        with requirement_path(path):
            for backend in ("igraph", "ortools", "auto"):
                sweep = select_sweep(problem, lams, backend=backend)
                assert [s.selected for s in sweep] == [
                    smallest_optimal(problem, lam)[0] for lam in lams
                ]
                assert sweep == [select_mincut(problem, lam, backend=backend) for lam in lams]


@settings(FAST, max_examples=300)
@given(problem=any_problem, lam=st.sampled_from([0.0, 1.0, 2.0, 3.7]))
def test_greedy_and_all_are_unchanged_on_both_paths(problem: SelectionProblem, lam: float) -> None:
    union = tuple(np.asarray(feasible_subsets(problem).any(axis=0), dtype=bool).tolist())
    greedy_rule = greedy_by_topological_order(problem, lam)
    for path in PATHS:
        with requirement_path(path):
            assert select_all(problem, lam).selected == union, path
            greedy = select_greedy(problem, lam)
            check_selection(problem, lam, greedy)
            if ig.Graph(
                n=len(problem.weights), edges=list(problem.requires), directed=True
            ).is_dag():
                assert greedy.selected == greedy_rule, path


def test_a_long_chain_takes_the_igraph_fallback_and_agrees_with_level_sweeps() -> None:
    # 3000 levels is past the level budget, so analysis falls back to igraph by itself.
    n = 3000
    requires = [(k, k + 1) for k in range(n - 1)]
    for last, expected in ((5000.0, True), (2000.0, False)):
        # p = -1 for every link but the last: worth it only if the last pays for the chain.
        problem = SelectionProblem([0.0] * (n - 1) + [last], [1.0] * n, [True] * n, requires)
        assert analysis_path(problem) == "igraph"
        result = select_mincut(problem, 1.0)
        assert result.selected == (expected,) * n
        with requirement_path("levels"):
            assert analysis_path(problem) == "levels"
            assert select_mincut(problem, 1.0) == result
            assert select_greedy(problem, 1.0).selected == (False,) * n
    # A non-executable link blocks everything after it, on both paths.
    broken = SelectionProblem([1.0] * n, [0.5] * n, [k != 1500 for k in range(n)], requires)
    expected_all = tuple(k < 1500 for k in range(n))
    assert select_all(broken, 1.0).selected == expected_all
    assert select_mincut(broken, 1.0).selected == expected_all
    with requirement_path("levels"):
        assert select_all(broken, 1.0).selected == expected_all
        assert select_mincut(broken, 1.0).selected == expected_all


def test_reduced_mincut_matches_the_unreduced_network_on_a_cascade() -> None:
    problem = cascade_problem(20_000, seed=5)
    for lam in (0.5, 1.0, 2.0):
        tails, heads, caps, n_nodes, s, t, nodes = selection_bench.network(problem, lam)
        whole = np.zeros(len(problem.weights), dtype=bool)
        whole[nodes] = np.asarray(BACKENDS["ortools"](tails, heads, caps, n_nodes, s, t))[
            : len(nodes)
        ]
        for backend in ("ortools", "igraph", "auto"):
            assert select_mincut(problem, lam, backend=backend).selected == tuple(whole.tolist())


def test_medium_instance_with_cycles_matches_the_unreduced_network() -> None:
    rng = np.random.default_rng(23)
    n = 2000
    j = rng.integers(0, n, 3 * n)
    i = rng.integers(0, n, 3 * n)
    forward = rng.random(3 * n) < 0.995  # mostly a DAG, with a few cycles
    lo = np.where(forward, np.minimum(i, j), np.maximum(i, j))
    hi = np.where(forward, np.maximum(i, j), np.minimum(i, j))
    keep = lo != hi
    problem = SelectionProblem(
        weights=rng.integers(0, 6, n).astype(float).tolist(),
        costs=rng.integers(0, 4, n).astype(float).tolist(),
        executable=(rng.random(n) < 0.99).tolist(),
        requires=list(zip(lo[keep].tolist(), hi[keep].tolist(), strict=True)),
    )
    run = scc_runnable(problem)
    assert sum(run) < sum(problem.executable)  # some cycles did form
    expected = {lam: unreduced_mincut(problem, lam, "ortools", run) for lam in (0.0, 1.0, 2.0)}
    assert all(any(x) for x in expected.values())
    for path in PATHS:
        with requirement_path(path):
            sweep = select_sweep(problem, list(expected), backend="auto")
            assert [r.selected for r in sweep] == list(expected.values()), path


def test_bench_reports_reduction_shares_that_partition_the_candidates(
    capsys: pytest.CaptureFixture[str],
) -> None:
    problem = cascade_problem(5_000, seed=2)
    shares = selection_bench.reduction_shares(problem, 1.0)
    parts = [shares[k] for k in ("blocked", "useless", "forced", "left")]
    assert sum(parts) == pytest.approx(1.0)
    assert all(0.0 <= x <= 1.0 for x in parts)
    assert shares["blocked"] > 0.5  # 3 % unrunnable, each required by many below it
    assert 0.0 < shares["left"] < 0.5
    assert selection_bench.main(["--max-size", "1000", "--repeats", "1"]) == 0
    out = capsys.readouterr().out
    assert "left" in out
    assert " yes" in out and " NO" not in out


@settings(FAST, max_examples=500)
@given(problem=st.one_of(problems(), problems(acyclic=False, max_n=8)))
def test_levels_are_longest_path_depths_and_hold_every_freed_arc(
    problem: SelectionProblem,
) -> None:
    n = len(problem.weights)
    requires = list(problem.requires)
    reach = reach_matrix(n, requires)
    cyclic = np.diag(reach)
    unfreed = cyclic | (reach & cyclic[:, None]).any(axis=0)
    depth = [0] * n  # longest requirement path ending at v, for freed candidates
    for _ in range(n):
        for j, i in requires:
            if not unfreed[i]:
                depth[i] = max(depth[i], depth[j] + 1)
    j_arr = np.asarray([j for j, _ in requires], dtype=np.int64)
    i_arr = np.asarray([i for _, i in requires], dtype=np.int64)
    # A finite budget turns a frontier that never empties into a failure, not a hang.
    levels = selection.levels(n, j_arr, i_arr, budget=n + 1)
    assert levels is not None
    dag, got_unfreed = levels
    assert (got_unfreed == unfreed).all()
    got = sorted(
        (int(dag.tails[k]), int(dag.heads[k]), level)
        for level, (lo, hi) in enumerate(itertools.pairwise(dag.bounds.tolist()))
        for k in range(lo, hi)
    )
    assert got == sorted((j, i, depth[j]) for j, i in requires if not unfreed[j])


def test_requires_may_be_an_integer_array() -> None:
    pairs = [(0, 1), (1, 2), (0, 3)]
    as_list = SelectionProblem([0.0, 1.0, 9.0, 0.5], [2.0, 2.0, 1.0, 1.0], [True] * 4, pairs)
    as_array = SelectionProblem(
        as_list.weights,
        as_list.costs,
        as_list.executable,
        np.asarray(pairs, dtype=np.int32),  # type: ignore[arg-type]
    )
    # p = [-2, -1, 8, -0.5]: 2 pays for its chain 0 <- 1 <- 2; 3 is not worth it.
    assert select_mincut(as_array, 1.0).selected == (True, True, True, False)
    assert select_mincut(as_array, 1.0) == select_mincut(as_list, 1.0)
    floats = SelectionProblem(
        as_list.weights,
        as_list.costs,
        as_list.executable,
        np.asarray(pairs, dtype=np.float64),  # type: ignore[arg-type]
    )
    with pytest.raises(ValueError, match="integer indices"):
        select_mincut(floats, 1.0)
    with pytest.raises(ValueError, match=r"requires\[1\] = \(1, 7\)"):
        select_mincut(
            SelectionProblem([1.0] * 3, [1.0] * 3, [True] * 3, np.asarray([(0, 1), (1, 7)])),  # type: ignore[arg-type]
            1.0,
        )


# --------------------------------------------------------------------------- the frontier


def envelope(problem: SelectionProblem) -> list[tuple[Fraction, int, int]]:
    """The upper envelope of every feasible closure's line W - λC over λ >= 0, by brute
    force in exact arithmetic: (λ where the line starts, W, C), from λ = 0 up."""
    subsets = feasible_subsets(problem)
    w = [Fraction(int(x)) for x in problem.weights]
    c = [Fraction(int(x)) for x in problem.costs]
    lines = {
        (
            sum((w[i] for i in np.flatnonzero(s)), Fraction(0)),
            sum((c[i] for i in np.flatnonzero(s)), Fraction(0)),
        )
        for s in subsets
    }
    out: list[tuple[Fraction, int, int]] = []
    lam = Fraction(0)
    current = max(lines, key=lambda line: (line[0], -line[1]))  # best at λ = 0
    while True:
        out.append((lam, int(current[0]), int(current[1])))
        # The next line: the first to overtake the current one as λ grows (of several
        # meeting there, the cheapest: the others are on top at that one λ only).
        later = [
            ((current[0] - W) / (current[1] - C), C, W, C)
            for W, C in lines
            if current[1] > C and (current[0] - W) / (current[1] - C) >= lam
        ]
        if not later:
            return out
        cross, _, W, C = min(later)
        lam, current = cross, (W, C)


@st.composite
def integer_problems(draw: st.DrawFn, max_n: int = 8) -> SelectionProblem:
    n = draw(st.integers(0, max_n))
    pairs = [(a, b) for a in range(n) for b in range(a + 1, n)]
    requires = draw(st.lists(st.sampled_from(pairs), unique=True, max_size=2 * n)) if pairs else []
    return SelectionProblem(
        weights=draw(st.lists(st.integers(0, 9).map(float), min_size=n, max_size=n)),
        costs=draw(st.lists(st.integers(0, 6).map(float), min_size=n, max_size=n)),
        executable=draw(
            st.lists(st.sampled_from([True, True, True, False]), min_size=n, max_size=n)
        ),
        requires=requires,
    )


@settings(FAST, max_examples=400)
@given(problem=integer_problems())
def test_frontier_is_the_exact_envelope_of_every_closure(problem: SelectionProblem) -> None:
    """The breakpoints are the brute-force envelope's, each step's figures its line's,
    and each step's selection what the min-cut selects anywhere inside the step."""
    steps = selection.frontier(problem)
    expected = envelope(problem)
    assert [(s.repair, s.cost) for s in steps] == [(float(W), float(C)) for _, W, C in expected]
    assert [s.lam_from for s in steps] == pytest.approx([float(lam) for lam, _, _ in expected])
    assert [s.lam_to for s in steps[:-1]] == [s.lam_from for s in steps[1:]]
    assert steps[-1].lam_to is None and steps[-1].cost == 0
    for step in steps:
        end = step.lam_to if step.lam_to is not None else step.lam_from + 2.0
        for lam in (step.lam_from + (end - step.lam_from) * f for f in (0.01, 0.5, 0.99)):
            if step.lam_from < lam < end:
                assert select_mincut(problem, lam).selected == step.selected
                assert step.selected == smallest_optimal(problem, lam)[0]
    sizes = [sum(s.selected) for s in steps]
    assert sizes == sorted(sizes, reverse=True)  # nested: each step skips more
    for bigger, smaller in itertools.pairwise(steps):
        assert all(a or not b for a, b in zip(bigger.selected, smaller.selected, strict=True))


def test_frontier_of_a_small_cascade_by_hand() -> None:
    # A record r (w 0, c 1) feeds a summary s (w 4, c 1) and a router n (w 6, c 10).
    problem = SelectionProblem(
        weights=[0.0, 4.0, 6.0],
        costs=[1.0, 1.0, 10.0],
        executable=[True, True, True],
        requires=[(0, 1), (0, 2)],
    )
    steps = selection.frontier(problem)
    got = [(s.lam_from, s.lam_to, s.selected) for s in steps]
    assert got == [
        (0.0, pytest.approx(6 / 10), (True, True, True)),  # the router stops paying at 0.6
        (pytest.approx(0.6), pytest.approx(2.0), (True, True, False)),  # s + r: 4 - 2λ
        (pytest.approx(2.0), None, (False, False, False)),
    ]
    # At a breakpoint ties are not repaired: the smaller (next) selection.
    assert select_mincut(problem, 0.6).selected == (True, True, False)
    assert select_mincut(problem, 2.0).selected == (False, False, False)


def test_frontier_keeps_free_candidates_at_any_lambda() -> None:
    problem = SelectionProblem(
        weights=[1.0, 2.0, 0.0],
        costs=[0.0, 3.0, 0.0],
        executable=[True, True, True],
        requires=[(1, 2)],  # the free third candidate needs the dear second one
    )
    steps = selection.frontier(problem)
    assert [s.selected for s in steps] == [(True, True, False), (True, False, False)]
    assert steps[-1].lam_to is None and steps[0].lam_to == pytest.approx(2 / 3)
    assert selection.frontier(SelectionProblem([], [], [], [])) == [
        selection.FrontierStep(0.0, None, (), 0.0, 0.0)
    ]


@settings(FAST, max_examples=300)
@given(problem=problems())
def test_frontier_steps_are_what_mincut_selects_inside_them(problem: SelectionProblem) -> None:
    """Float values and costs (ties at the profit resolution included): every step is
    the min-cut's selection strictly inside it, and the steps are nested. Checked up to
    λ = 1e6: beyond, λ·c is so large that the selector's profit resolution coarsens
    (``scaled``) and a 1e-250 cost difference is a tie to it, not to the lines."""
    steps = selection.frontier(problem)
    limit = 1e6
    for step in steps:
        end = min(step.lam_to if step.lam_to is not None else step.lam_from + 3.0, limit)
        if end - step.lam_from > 1e-6:
            lam = (step.lam_from + end) / 2
            assert select_mincut(problem, lam).selected == step.selected, (lam, step)
    for bigger, smaller in itertools.pairwise(steps):
        assert bigger.lam_to == smaller.lam_from and bigger.cost > smaller.cost
        assert all(a or not b for a, b in zip(bigger.selected, smaller.selected, strict=True))
