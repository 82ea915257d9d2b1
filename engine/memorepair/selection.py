"""Cost-aware selection of repair candidates (SPEC §5).

The candidates to repair form a predecessor-closed set: a candidate may be repaired only if
every candidate it requires is repaired too, and only if it can run at all. Among such sets we
want the one that maximises ``Σ w_i - λ Σ c_i``. That is a maximum-weight closure, which one
s-t minimum cut solves exactly (Picard 1976), so no heuristic or budget search is needed.

Three decisions make the answer the same on every backend and every run:

* Profits ``p_i = w_i - λ c_i`` are compared as integers: they are scaled by ``10**k`` and
  rounded, where ``k`` is the largest exponent ``≤ 9`` that keeps ``Σ |p_i| · 10**k`` below
  ``2**52``. The resolution is therefore ``10**-k`` (``1e-9`` for ordinary data, coarser only
  for enormous totals). Integer capacities are exact both in OR-tools (int64) and in igraph
  (doubles, exact below ``2**53``), and float noise such as ``0.3 - 3 · 0.1`` rounds to a tie.
* "Infinite" capacities are the finite number ``Σ |scaled p_i| + 1``: larger than any finite
  cut, still exact in a double, and free of ``inf - inf`` arithmetic inside the solvers.
* Among the maximum closures we return the smallest one (ties are not repaired: a candidate
  whose inclusion gains nothing costs a staging slot and a validation run for no benefit). The
  maximum closures are closed under intersection, so the smallest is unique; it is the source
  side of the *minimal* minimum cut, i.e. the nodes reachable from ``s`` in the residual graph
  of any maximum flow. Solvers differ in which minimum cut they report, so the igraph backend
  recomputes the residual reachability itself; OR-tools' ``get_source_side_min_cut`` already
  is that set.

Exact reductions settle most candidates before any network is built (``exact_reductions``). A
candidate that cannot run, or transitively requires one that cannot, is in no closure. One
with ``p ≤ 0`` none of whose alive descendants (the candidates that transitively require
it) has ``p > 0`` is outside the smallest optimum. One with ``p > 0`` whose whole ancestor
closure is runnable with ``p ≥ 0`` is in every optimum, and so is that closure. Only what is
left goes to the min-cut, split into weakly connected components. The first rule does not
depend on λ and is computed once per problem; the others are three linear sweeps per λ. On
the million-candidate cascade of ``selection_bench`` they leave about 6 % of the candidates
to the min-cut.

The requirement graph is analysed with numpy: Kahn's algorithm, one whole frontier per step,
gives topological levels (``levels``), and every reachability question is one vectorised
step per level. Graphs too deep for that (``level_budget``) use igraph's search instead.

Only this module imports igraph (requirement-graph analysis and a min-cut backend) and
OR-tools (min-cut backend for large networks), both imported on first use.
"""

from __future__ import annotations

import itertools
import math
import operator
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal, Protocol

import numpy as np
import numpy.typing as npt

from memorepair.candidates import Candidate, CandidateFamily

__all__ = [
    "BACKENDS",
    "EventSelection",
    "FrontierStep",
    "MinCutSolver",
    "PreparedCut",
    "Selection",
    "SelectionProblem",
    "frontier",
    "scaled_profits",
    "select",
    "select_all",
    "select_greedy",
    "select_mincut",
    "select_sweep",
    "selection_problem",
    "solve_closure",
]

#: Which selection a repair runs: the exact min-cut, the greedy ablation, Repair-all, or
#: "none" (the no-cascade-repair baseline, which selects nothing).
Selector = Literal["mincut", "greedy", "all", "none"]

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]
FloatArray = npt.NDArray[np.float64]
IntVector = Sequence[int] | IntArray

MAX_DECIMALS: Final = 9
"""Finest profit resolution is ``10**-MAX_DECIMALS``; finer differences count as ties."""

CAPACITY_LIMIT: Final = 2**52
"""Bound on the sum of scaled profits, so that "infinity" stays an exact double and int64."""

MAX_LAM_COST: Final = 1e15
"""``λ · max(c)`` above this is a configuration error, not a meaningful trade-off."""

_DEFAULT_THRESHOLD: Final = 200_000


def _igraph() -> Any:
    """igraph, imported on first use. Its import looks for matplotlib (to draw), which
    alone takes most of a second where matplotlib is installed: every command that never
    selects (`record`, `search`, `status`, ...) would pay it at start-up."""
    import igraph

    return igraph


# --------------------------------------------------------------------------- public data


@dataclass(frozen=True)
class SelectionProblem:
    """Candidates indexed 0..n-1.

    ``requires`` holds requirement-graph edges ``(j, i)``: i requires j (``j ∈ P̄_i``), so j's
    successor must be staged before i is repaired, and i may be selected only with j.
    """

    weights: Sequence[float]
    costs: Sequence[float]
    executable: Sequence[bool]
    requires: Sequence[tuple[int, int]]


@dataclass(frozen=True)
class Selection:
    """A feasible selection ``x`` and what it is worth at the λ it was chosen for.

    ``backend`` names what produced it: ``"igraph"``, ``"ortools"`` (joined with ``+`` when
    components went to different backends), ``"trivial"`` when the exact reductions decided
    every candidate and no network was needed, ``"greedy"`` or ``"all"``.
    """

    selected: tuple[bool, ...]
    objective: float
    repair: float
    cost: float
    backend: str


# --------------------------------------------------------------------------- solver interface


class PreparedCut(Protocol):
    """A network whose arcs are fixed; only capacities change between solves (λ sweeps)."""

    def solve(self, capacities: IntVector) -> BoolArray:
        """Return the minimal source side of a minimum cut as a mask over the nodes."""
        ...


class MinCutSolver(Protocol):
    """A min-cut backend: arrays in, the minimal source-side mask out.

    Capacities must be non-negative integers below ``2**53``; the mask has ``n_nodes``
    entries and is the set of nodes reachable from ``s`` in the residual graph of a maximum
    flow, which is the same for every maximum flow.
    """

    def __call__(
        self,
        tails: IntVector,
        heads: IntVector,
        capacities: IntVector,
        n_nodes: int,
        s: int,
        t: int,
    ) -> list[bool]: ...

    def prepare(
        self, tails: IntVector, heads: IntVector, n_nodes: int, s: int, t: int
    ) -> PreparedCut: ...


def _pairs(tails: IntArray, heads: IntArray) -> Iterator[tuple[int, int]]:
    # Python ints in tuples: igraph 1.0 converts them several times faster than numpy arrays.
    return zip(tails.tolist(), heads.tolist(), strict=True)


class _IgraphCut:
    """igraph push-relabel; its own partition is the *maximal* source side, so we recompute.

    ``GraphBase.mincut`` reports the side not reaching ``t`` backwards, which is the largest
    minimum-cut source side. Calling ``mincut`` and then ``maxflow`` would run the flow twice,
    so we call ``GraphBase.maxflow`` once for the per-arc flow and take the nodes reachable
    from ``s`` along arcs with residual capacity. The cut of that set is checked against the
    flow value, so a wrong flow cannot go unnoticed.
    """

    def __init__(self, tails: IntVector, heads: IntVector, n_nodes: int, s: int, t: int):
        self._tails = np.asarray(tails, dtype=np.int64)
        self._heads = np.asarray(heads, dtype=np.int64)
        self._n = n_nodes
        self._s = s
        self._t = t
        self._graph = _igraph().Graph(
            n=n_nodes, edges=_pairs(self._tails, self._heads), directed=True
        )

    def solve(self, capacities: IntVector) -> BoolArray:
        caps = np.asarray(capacities, dtype=np.int64)
        value, flow_list, _, _ = _igraph().GraphBase.maxflow(
            self._graph, self._s, self._t, caps.tolist()
        )
        flow = np.asarray(flow_list, dtype=np.float64)
        capf = caps.astype(np.float64)
        forward = flow < capf
        backward = flow > 0
        res_tails = np.concatenate([self._tails[forward], self._heads[backward]])
        res_heads = np.concatenate([self._heads[forward], self._tails[backward]])
        residual = _igraph().Graph(n=self._n, edges=_pairs(res_tails, res_heads), directed=True)
        mask = np.zeros(self._n, dtype=np.bool_)
        mask[residual.subcomponent(self._s, mode="out")] = True
        crossing = mask[self._tails] & ~mask[self._heads]
        if mask[self._t] or int(caps[crossing].sum()) != round(value):
            raise RuntimeError("igraph max flow is inconsistent with its residual cut")
        return mask


class _OrtoolsCut:
    """OR-tools ``SimpleMaxFlow``; its source side is already the residual reachable set."""

    def __init__(self, tails: IntVector, heads: IntVector, n_nodes: int, s: int, t: int):
        from ortools.graph.python import max_flow

        self._max_flow: Any = max_flow
        self._n = n_nodes
        self._s = s
        self._t = t
        self._smf: Any = max_flow.SimpleMaxFlow()
        # A zero-capacity s -> t arc makes both terminals exist even in an arc-free network.
        all_tails = np.append(np.asarray(tails, dtype=np.int64), s)
        all_heads = np.append(np.asarray(heads, dtype=np.int64), t)
        self._arcs = self._smf.add_arcs_with_capacity(
            all_tails, all_heads, np.zeros(len(all_tails), dtype=np.int64)
        )

    def solve(self, capacities: IntVector) -> BoolArray:
        caps = np.append(np.asarray(capacities, dtype=np.int64), 0)
        self._smf.set_arcs_capacity(self._arcs, caps)
        status = self._smf.solve(self._s, self._t)
        if status != self._max_flow.SimpleMaxFlow.OPTIMAL:
            raise RuntimeError(f"OR-tools max flow failed with status {status}")
        mask = np.zeros(self._n, dtype=np.bool_)
        mask[np.asarray(self._smf.get_source_side_min_cut(), dtype=np.int64)] = True
        return mask


class _Backend:
    """Registry entry: a one-shot solver that can also hand out a reusable prepared network."""

    def __init__(self, name: str, cut: type[_IgraphCut] | type[_OrtoolsCut]):
        self.name = name
        self._cut = cut

    def prepare(
        self, tails: IntVector, heads: IntVector, n_nodes: int, s: int, t: int
    ) -> PreparedCut:
        return self._cut(tails, heads, n_nodes, s, t)

    def __call__(
        self,
        tails: IntVector,
        heads: IntVector,
        capacities: IntVector,
        n_nodes: int,
        s: int,
        t: int,
    ) -> list[bool]:
        mask: list[bool] = self.prepare(tails, heads, n_nodes, s, t).solve(capacities).tolist()
        return mask

    def __repr__(self) -> str:
        return f"<min-cut backend {self.name}>"


BACKENDS: Final[dict[str, MinCutSolver]] = {
    "igraph": _Backend("igraph", _IgraphCut),
    "ortools": _Backend("ortools", _OrtoolsCut),
}


def _auto_backend(size: int, threshold: int) -> str:
    # igraph is fastest on small networks but its push-relabel degrades on large sparse
    # cascade-shaped ones (measured quadratic, see pyproject); OR-tools scales.
    return "igraph" if size < threshold else "ortools"


def _check_backend(backend: str) -> None:
    if backend != "auto" and backend not in BACKENDS:
        known = ", ".join(["auto", *BACKENDS])
        raise ValueError(f"backend {backend!r} is unknown; expected one of {known}")


def solve_closure(
    tails: IntVector,
    heads: IntVector,
    capacities: Sequence[float | int] | IntArray,
    s: int,
    t: int,
    *,
    backend: str,
    n_nodes: int | None = None,
    threshold: int = _DEFAULT_THRESHOLD,
) -> list[bool]:
    """Minimal source side of a minimum s-t cut, as a mask over nodes ``0..n_nodes-1``.

    Capacities must be integral (floats with integral values are accepted): exactness across
    backends rests on integer arithmetic. ``n_nodes`` defaults to one past the largest node.
    """
    _check_backend(backend)
    tail_arr = _index_array(tails, "tails")
    head_arr = _index_array(heads, "heads")
    if len(tail_arr) != len(head_arr) or len(tail_arr) != len(capacities):
        raise ValueError(
            f"tails, heads and capacities must have equal lengths, got "
            f"{len(tail_arr)}, {len(head_arr)} and {len(capacities)}"
        )
    cap_float = np.asarray(capacities, dtype=np.float64)
    bad = np.flatnonzero(
        ~np.isfinite(cap_float)
        | (cap_float < 0)
        | (cap_float >= 2.0**53)
        | (np.floor(cap_float) != cap_float)
    )
    if len(bad):
        i = int(bad[0])
        raise ValueError(f"capacities[{i}] = {cap_float[i]!r}: must be an integer in [0, 2**53)")
    caps = np.asarray(capacities).astype(np.int64)
    largest = max(s, t, int(tail_arr.max(initial=-1)), int(head_arr.max(initial=-1)))
    n = largest + 1 if n_nodes is None else n_nodes
    if min(s, t) < 0 or largest >= n:
        raise ValueError(f"node index out of range 0..{n - 1} (s={s}, t={t})")
    if s == t:
        raise ValueError(f"s and t must differ, both are {s}")
    name = _auto_backend(n + len(caps), threshold) if backend == "auto" else backend
    return BACKENDS[name](tail_arr, head_arr, caps, n, s, t)


def _index_array(values: IntVector, name: str) -> IntArray:
    arr = np.asarray(values)
    if arr.size == 0:
        return np.zeros(0, dtype=np.int64)
    if arr.ndim != 1 or arr.dtype.kind not in "iu":
        raise ValueError(f"{name} must be a flat sequence of integers")
    if int(arr.min()) < 0:
        raise ValueError(f"{name}[{int(np.argmin(arr))}] is negative")
    return arr.astype(np.int64)


# --------------------------------------------------------------------------- problem analysis


@dataclass
class _Batch:
    """Disjoint weakly connected components solved as one network.

    The components share no arc, so the minimum cut of their union is the union of their
    minimum cuts and the residual reachability never crosses between them: a batch returns
    exactly what solving each component alone would, and saves the per-call overhead when a
    cascade splits into many small components.
    """

    nodes: IntArray  # global candidate ids; local id = position
    req_tails: IntArray  # local ids: requirement (j, i) becomes arc i -> j
    req_heads: IntArray
    cuts: dict[str, PreparedCut] = field(default_factory=dict)

    @property
    def size(self) -> int:
        k = len(self.nodes)
        return (k + 2) + (2 * k + len(self.req_tails))

    def arcs(self) -> tuple[IntArray, IntArray]:
        """Every candidate gets both terminal arcs, so λ changes only capacities."""
        k = len(self.nodes)
        local = np.arange(k, dtype=np.int64)
        s, t = k, k + 1
        tails = np.concatenate([np.full(k, s, dtype=np.int64), local, self.req_tails])
        heads = np.concatenate([local, np.full(k, t, dtype=np.int64), self.req_heads])
        return tails, heads

    def capacities(self, profits: IntArray, runnable: BoolArray) -> IntArray:
        p = profits[self.nodes]
        r = runnable[self.nodes]
        infinity = int(np.abs(p[r]).sum()) + 1
        source = np.where(r, np.maximum(p, 0), 0)
        sink = np.where(r, np.maximum(-p, 0), infinity)
        required = np.full(len(self.req_tails), infinity, dtype=np.int64)
        return np.concatenate([source, sink, required]).astype(np.int64)

    def solve(self, backend: str, profits: IntArray, runnable: BoolArray) -> BoolArray:
        cut = self.cuts.get(backend)
        if cut is None:
            k = len(self.nodes)
            tails, heads = self.arcs()
            cut = BACKENDS[backend].prepare(tails, heads, k + 2, k, k + 1)
            self.cuts[backend] = cut
        mask = cut.solve(self.capacities(profits, runnable))
        return mask[: len(self.nodes)]


class _Reach(Protocol):
    """Reachability along requirements in a graph holding every arc among alive candidates.

    A candidate is *alive* when it is runnable and so is everything it transitively requires.
    Alive candidates are closed under "requires", so a path between two alive candidates never
    leaves them: the level sweeps keep only alive arcs, the igraph fallback keeps every arc,
    and both give the same answer on alive candidates for alive seeds, which is all we ask.
    """

    @property
    def tails(self) -> IntArray:
        """The ``j`` of each requirement ``(j, i)`` held."""
        ...

    @property
    def heads(self) -> IntArray:
        """The ``i`` of each requirement ``(j, i)`` held."""
        ...

    def down(self, seeds: BoolArray) -> BoolArray:
        """The seeds and every candidate that transitively requires one of them."""
        ...

    def up(self, seeds: BoolArray) -> BoolArray:
        """The seeds and every candidate that one of them transitively requires."""
        ...

    def restrict(self, keep: BoolArray) -> _Reach:
        """A reachability that agrees with this one on ``keep`` for seeds in ``keep``.

        ``keep`` must be closed under "requires" (then no path into it leaves it); the
        result may be smaller and so faster to sweep, or this one unchanged.
        """
        ...


@dataclass(frozen=True)
class _Levelled:
    """The arcs of a requirement DAG grouped by the topological level of their tail.

    A level-synchronous sweep is exact: going down, the arcs out of level ``L`` read marks of
    level-``L`` tails, whose requirements all lie on earlier levels and are settled; going
    up, they read marks of heads on deeper levels, settled likewise. Each level is one
    vectorised numpy step, so this serves graphs of moderate depth (``level_budget``).
    """

    tails: IntArray
    heads: IntArray
    bounds: IntArray  # the arcs out of level L are [bounds[L], bounds[L + 1])

    def _spans(self) -> list[tuple[int, int]]:
        edges = self.bounds.tolist()
        return [(lo, hi) for lo, hi in itertools.pairwise(edges) if hi > lo]

    def down(self, seeds: BoolArray) -> BoolArray:
        mark = seeds.copy()
        for lo, hi in self._spans():
            heads = self.heads[lo:hi]
            mark[heads[mark[self.tails[lo:hi]]]] = True
        return mark

    def up(self, seeds: BoolArray) -> BoolArray:
        mark = seeds.copy()
        for lo, hi in reversed(self._spans()):
            tails = self.tails[lo:hi]
            mark[tails[mark[self.heads[lo:hi]]]] = True
        return mark

    def restrict(self, keep: BoolArray) -> _Levelled:
        kept = np.flatnonzero(keep[self.tails] & keep[self.heads])
        return _Levelled(self.tails[kept], self.heads[kept], np.searchsorted(kept, self.bounds))


class GraphReach:
    """igraph breadth-first search from a virtual root joined to the seeds.

    The fallback for requirement graphs too deep for level sweeps, where one numpy step per
    level would cost more than igraph's graph build and search.
    """

    def __init__(self, n: int, tails: IntArray, heads: IntArray):
        self.tails = tails
        self.heads = heads
        self._n = n
        self.graph: Any = _igraph().Graph(n=n, edges=_pairs(tails, heads), directed=True)

    def down(self, seeds: BoolArray) -> BoolArray:
        return self._search(seeds, "out")

    def up(self, seeds: BoolArray) -> BoolArray:
        return self._search(seeds, "in")

    def restrict(self, keep: BoolArray) -> GraphReach:
        return self

    def _search(self, seeds: BoolArray, mode: str) -> BoolArray:
        starts = np.flatnonzero(seeds)
        mask = np.zeros(self._n + 1, dtype=np.bool_)
        if len(starts):
            graph = self.graph.copy()
            graph.add_vertices(1)
            root = np.full(len(starts), self._n, dtype=np.int64)
            graph.add_edges(_pairs(root, starts) if mode == "out" else _pairs(starts, root))
            mask[graph.subcomponent(self._n, mode=mode)] = True
        return mask[: self._n]


_MIN_LEVELS: Final = 64
_ELEMENTS_PER_LEVEL: Final = 64


def level_budget(n: int, m: int) -> int:
    """Most levels worth sweeping level by level before falling back to igraph.

    A level costs about ten microseconds of numpy call overhead whatever its size, while
    building and searching an igraph graph costs well under a microsecond per candidate and
    arc; up to ``(n + m) / 64`` levels the overhead stays a fraction of igraph's cost.
    Cascades are shallow (tens of levels); long requirement chains take the fallback.
    """
    return max(_MIN_LEVELS, (n + m) // _ELEMENTS_PER_LEVEL)


def levels(
    n: int, tails: IntArray, heads: IntArray, budget: int
) -> tuple[_Levelled, BoolArray] | None:
    """Kahn's algorithm, vectorised one whole frontier per round.

    Returns the arcs grouped by the level of their tail (the round in which the tail had no
    unprocessed requirement left) and the candidates never freed: those on a requirement
    cycle and all that transitively require one. Returns None when more than ``budget``
    rounds are needed.
    """
    order = np.argsort(tails)  # arcs grouped by tail (CSR); order within a group is free
    first = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(tails, minlength=n), out=first[1:])
    grouped_heads = heads[order]
    indegree = np.bincount(heads, minlength=n)
    stamp = np.empty(n, dtype=np.int64)
    frontier = np.flatnonzero(indegree == 0)
    run_tails: list[IntArray] = []
    run_heads: list[IntArray] = []
    while len(frontier):
        if len(run_tails) == budget:
            return None
        starts = first[frontier]
        counts = first[frontier + 1] - starts
        ends = np.cumsum(counts)
        positions = np.arange(int(ends[-1]), dtype=np.int64) + np.repeat(
            starts - ends + counts, counts
        )
        freed = grouped_heads[positions]
        run_tails.append(np.repeat(frontier, counts))
        run_heads.append(freed)
        if 4 * len(freed) > n:
            # A wide level: one pass over all candidates is cheaper than scattered updates.
            # A candidate reaching in-degree 0 with an arc from this level is new: those
            # already processed have no unprocessed requirement, so no arc from here.
            drop = np.bincount(freed, minlength=n)
            indegree -= drop
            frontier = np.flatnonzero((indegree == 0) & (drop > 0))
        else:
            np.subtract.at(indegree, freed, 1)
            ready = freed[indegree[freed] == 0]
            # A candidate freed by several arcs of this level is listed once per arc. After
            # the scatter its stamp names exactly one of its positions: dedupes without a sort.
            index = np.arange(len(ready), dtype=np.int64)
            stamp[ready] = index
            frontier = ready[stamp[ready] == index]
    bounds = np.zeros(len(run_tails) + 1, dtype=np.int64)
    np.cumsum([len(run) for run in run_tails], out=bounds[1:])
    empty = np.zeros(0, dtype=np.int64)
    dag = _Levelled(
        np.concatenate(run_tails) if run_tails else empty,
        np.concatenate(run_heads) if run_heads else empty,
        bounds,
    )
    return dag, indegree > 0


def _on_cycle(n: int, tails: IntArray, heads: IntArray, among: BoolArray) -> BoolArray:
    """Candidates on a requirement cycle, given a set ``among`` that holds every cycle."""
    nodes = np.flatnonzero(among)
    local = np.zeros(n, dtype=np.int64)
    local[nodes] = np.arange(len(nodes), dtype=np.int64)
    inside = among[tails] & among[heads]
    sub_tails = local[tails[inside]]
    sub_heads = local[heads[inside]]
    graph = _igraph().Graph(n=len(nodes), edges=_pairs(sub_tails, sub_heads), directed=True)
    scc = np.asarray(graph.connected_components(mode="strong").membership, dtype=np.int64)
    cyclic = np.bincount(scc)[scc] > 1
    cyclic[sub_heads[sub_heads == sub_tails]] = True  # self-requirements
    mask = np.zeros(n, dtype=np.bool_)
    mask[nodes[cyclic]] = True
    return mask


@dataclass
class Analysis:
    """The λ-independent part of a problem: validated arrays and requirement-graph facts."""

    weights: FloatArray
    costs: FloatArray
    runnable: BoolArray  # executable and not on a requirement cycle
    blocked: BoolArray  # not runnable, or transitively requires one that is not: never selected
    req_j: IntArray
    req_i: IntArray
    reach: _Reach  # over the alive (not blocked) candidates
    _batches: list[_Batch] | None = None
    _trivial: BoolArray | None = None

    @property
    def n(self) -> int:
        return len(self.weights)

    def batches(self, threshold: int) -> tuple[list[_Batch], BoolArray]:
        """The whole, unreduced problem packed into networks (the backend benchmark's)."""
        if self._batches is None or self._trivial is None:
            nodes = np.arange(self.n, dtype=np.int64)
            self._batches, self._trivial = _pack_components(
                nodes, self.req_j, self.req_i, threshold
            )
        return self._batches, self._trivial


def analyse(problem: SelectionProblem) -> Analysis:
    weights, costs, executable, req_j, req_i = _validate(problem)
    n = len(weights)
    # SPEC §4: the caller marks cycle members non-executable; we do not rely on it, because
    # a cycle has no topological order to execute in.
    runnable = executable.copy()
    levelled = levels(n, req_j, req_i, level_budget(n, len(req_j)))
    reach: _Reach
    if levelled is None:
        graph_reach = GraphReach(n, req_j, req_i)
        if not graph_reach.graph.is_dag():
            runnable &= ~_on_cycle(n, req_j, req_i, np.ones(n, dtype=np.bool_))
        blocked = graph_reach.down(~runnable)
        reach = graph_reach
    else:
        dag, unfreed = levelled
        if unfreed.any():
            runnable &= ~_on_cycle(n, req_j, req_i, unfreed)
        # Candidates never freed by Kahn's algorithm are cycles and what lies below them;
        # the sweep adds what lies below a non-executable candidate.
        blocked = dag.down(~runnable) | unfreed
        reach = dag.restrict(~blocked)
    return Analysis(weights, costs, runnable, blocked, req_j, req_i, reach)


def _pack_components(
    nodes: IntArray, req_j: IntArray, req_i: IntArray, threshold: int
) -> tuple[list[_Batch], BoolArray]:
    """Split a requirement graph into weakly connected components and group them.

    ``nodes`` are the global ids of its candidates and ``req_j``, ``req_i`` its requirements
    as positions in ``nodes``. Components with one candidate need no network; the mask
    returned marks their positions. The others are packed in component order into batches
    whose network stays below ``threshold`` nodes+arcs; a component that is that large on
    its own is its own batch.
    """
    k = len(nodes)
    graph = _igraph().Graph(n=k, edges=_pairs(req_j, req_i), directed=True)
    comp = np.asarray(graph.connected_components(mode="weak").membership, dtype=np.int64)
    n_comp = int(comp.max(initial=-1)) + 1
    comp_nodes = np.bincount(comp, minlength=n_comp)
    comp_arcs = np.bincount(comp[req_j], minlength=n_comp)
    trivial = comp_nodes[comp] == 1

    batch_of_comp = np.full(n_comp, -1, dtype=np.int64)
    sizes = 3 * comp_nodes + comp_arcs
    n_batches = 0
    current = 0  # network size of the open batch, 0 if none is open
    for c in np.flatnonzero(comp_nodes > 1).tolist():
        size = int(sizes[c])
        if current and current + size >= threshold:
            current = 0
        if not current:
            n_batches += 1
        batch_of_comp[c] = n_batches - 1
        current = (current or 2) + size

    node_batch = batch_of_comp[comp]
    node_order = np.argsort(node_batch, kind="stable")
    node_bounds = np.searchsorted(node_batch[node_order], np.arange(n_batches + 1))
    node_order = node_order[node_bounds[0] :]  # drop trivial candidates (batch -1)
    node_bounds = node_bounds - node_bounds[0]
    local = np.zeros(k, dtype=np.int64)
    starts = np.repeat(node_bounds[:-1], np.diff(node_bounds))
    local[node_order] = np.arange(len(node_order), dtype=np.int64) - starts

    edge_batch = node_batch[req_j]
    edge_order = np.argsort(edge_batch, kind="stable")
    edge_bounds = np.searchsorted(edge_batch[edge_order], np.arange(n_batches + 1))
    # Requirement (j, i): selecting i forces j, so the infinite arc runs i -> j.
    arc_tails = local[req_i[edge_order]]
    arc_heads = local[req_j[edge_order]]

    batches = [
        _Batch(
            nodes=nodes[node_order[node_bounds[b] : node_bounds[b + 1]]],
            req_tails=arc_tails[edge_bounds[b] : edge_bounds[b + 1]],
            req_heads=arc_heads[edge_bounds[b] : edge_bounds[b + 1]],
        )
        for b in range(n_batches)
    ]
    return batches, trivial


def _validate(
    problem: SelectionProblem,
) -> tuple[FloatArray, FloatArray, BoolArray, IntArray, IntArray]:
    n = len(problem.weights)
    for name in ("costs", "executable"):
        length = len(getattr(problem, name))
        if length != n:
            raise ValueError(f"{name} has {length} entries but weights has {n}")
    weights = _nonnegative(problem.weights, "weights")
    costs = _nonnegative(problem.costs, "costs")
    executable = np.asarray(problem.executable, dtype=np.bool_).reshape(n)

    if len(problem.requires) == 0:
        empty = np.zeros(0, dtype=np.int64)
        return weights, costs, executable, empty, empty.copy()
    pairs = _index_pairs(problem.requires)
    if pairs.min() < 0 or pairs.max() >= n:
        bad = np.flatnonzero(((pairs < 0) | (pairs >= n)).any(axis=1))
        k = int(bad[0])
        j, i = pairs[k].tolist()
        raise ValueError(f"requires[{k}] = ({j}, {i}): index out of range 0..{n - 1}")
    return weights, costs, executable, pairs[:, 0].copy(), pairs[:, 1].copy()


def _index_pairs(requires: Sequence[tuple[int, int]]) -> IntArray:
    """``requires`` as an ``(m, 2)`` int64 array, accepting only pairs of integers.

    ``np.asarray`` on a list of millions of tuples spends most of its time discovering the
    shape and dtype element by element. Checking the lengths with ``map(len, ...)`` and then
    streaming the flattened entries through ``operator.index`` (which accepts ints, bools and
    numpy integers but rejects floats and strings, as the integer-dtype check did) into
    ``np.fromiter`` does the same validation in C loops, several times faster.
    """
    if isinstance(requires, np.ndarray):
        pairs = requires
        if pairs.ndim != 2 or pairs.shape[1] != 2 or pairs.dtype.kind not in "iu":
            raise ValueError("requires must be a sequence of (j, i) pairs of integer indices")
        return pairs.astype(np.int64)
    try:
        lengths = set(map(len, requires))
    except TypeError as exc:
        raise ValueError("requires must be a sequence of (j, i) index pairs") from exc
    if lengths != {2}:
        raise ValueError("requires must be a sequence of (j, i) index pairs")
    flat = itertools.chain.from_iterable(requires)
    try:
        values = np.fromiter(map(operator.index, flat), dtype=np.int64, count=2 * len(requires))
    except (TypeError, OverflowError) as exc:
        raise ValueError("requires must be a sequence of (j, i) pairs of integer indices") from exc
    return values.reshape(-1, 2)


def _nonnegative(values: Sequence[float], name: str) -> FloatArray:
    try:
        arr = np.asarray(values, dtype=np.float64).reshape(len(values))
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be a flat sequence of numbers") from exc
    bad = np.flatnonzero(~np.isfinite(arr) | (arr < 0))
    if len(bad):
        i = int(bad[0])
        raise ValueError(f"{name}[{i}] = {arr[i]!r}: must be finite and >= 0")
    return arr


def _check_lam(lam: float, costs: FloatArray) -> float:
    lam_f = float(lam)
    if not math.isfinite(lam_f) or lam_f < 0:
        raise ValueError(f"lam = {lam!r}: must be finite and >= 0")
    largest = lam_f * float(costs.max(initial=0.0))
    if largest > MAX_LAM_COST:
        raise ValueError(
            f"lam = {lam_f!r} gives lam * max(costs) = {largest:.3g}, above {MAX_LAM_COST:.0e}"
        )
    return lam_f


def scaled(an: Analysis, lam: float) -> tuple[IntArray, int]:
    profits = an.weights - lam * an.costs
    total = float(np.abs(profits).sum())
    exponent = MAX_DECIMALS
    if total * 10.0**exponent > CAPACITY_LIMIT:
        exponent = math.floor(math.log10(CAPACITY_LIMIT / total))
        while total * 10.0**exponent > CAPACITY_LIMIT:  # log10 may round up at the boundary
            exponent -= 1
    scaled = np.rint(profits * 10.0**exponent).astype(np.int64)
    return scaled, exponent


def scaled_profits(problem: SelectionProblem, lam: float) -> tuple[list[int], int]:
    """The integer profits every selector compares, and their decimal exponent ``k``.

    ``p_i`` is represented by ``round(p_i · 10**k)``; differences below ``10**-k`` are ties.
    Exposed so that callers and tests can see the resolution a decision was made at.
    """
    an = analyse(problem)
    profits, exponent = scaled(an, _check_lam(lam, an.costs))
    return profits.tolist(), exponent


# --------------------------------------------------------------------------- selectors


def _selection(an: Analysis, mask: BoolArray, lam: float, backend: str) -> Selection:
    w = an.weights[mask]
    c = an.costs[mask]
    return Selection(
        selected=tuple(mask.tolist()),
        objective=float(np.sum(w - lam * c)),
        repair=float(np.sum(w)),
        cost=float(np.sum(c)),
        backend=backend,
    )


def exact_reductions(an: Analysis, profits: IntArray) -> tuple[BoolArray, BoolArray, _Reach]:
    """Exact reductions: what every smallest optimum contains, and what is left to decide.

    Let ``S`` be the smallest maximum closure. Three rules settle most candidates without
    a network, each exact for the integer profits ``p`` (see the module docstring):

    * blocked candidates (``an.blocked``) are in no closure at all;
    * an alive candidate none of whose alive descendants-or-self has ``p > 0`` (not
      *useful*) is outside ``S``: removing it and everything requiring it from ``S`` keeps
      a closure and loses no profit, so ``S`` would not be the smallest;
    * an alive candidate with ``p > 0`` whose whole ancestor closure has ``p ≥ 0`` (no
      ancestor is *tainted* by ``p < 0``) is in every maximum closure, and with it that
      closure: adding it to any closure keeps a closure and gains ``p > 0``.

    Returns the forced-in candidates, the undecided rest (useful, not forced in) and a
    reachability restricted to the useful candidates. The undecided candidates' optimum
    is their own maximum-closure problem: requirements into forced candidates are already
    met, and none run from a forced candidate to an undecided one (forced is closed under
    "requires"), so ``S`` is the forced set plus the smallest optimum of the rest.
    """
    positive = ~an.blocked & (profits > 0)
    useful = an.reach.up(positive)
    within = an.reach.restrict(useful)
    tainted = within.down(useful & (profits < 0))
    forced = within.up(positive & ~tainted)
    return forced, useful & ~forced, within


def _mincut_masks(
    an: Analysis, lams: Sequence[float], backend: str, threshold: int
) -> Iterator[tuple[float, BoolArray, str]]:
    _check_backend(backend)
    checked = [_check_lam(lam, an.costs) for lam in lams]
    for lam in checked:
        profits, _ = scaled(an, lam)
        mask, rest, within = exact_reductions(an, profits)
        nodes = np.flatnonzero(rest)
        local = np.cumsum(rest) - 1  # position in nodes, for the candidates in rest
        inside = rest[within.tails] & rest[within.heads]
        batches, trivial = _pack_components(
            nodes, local[within.tails[inside]], local[within.heads[inside]], threshold
        )
        if trivial.any():
            # Cannot happen. An undecided candidate with p > 0 is tainted: the path to it
            # from its p < 0 ancestor is tainted throughout, so undecided. One with p <= 0
            # is useful: the path from it to a p > 0 descendant is useful, and a forced
            # candidate on it would have forced it in too. So each has an undecided arc.
            raise RuntimeError("exact reductions left an isolated undecided candidate")
        used: set[str] = set()
        for batch in batches:
            name = _auto_backend(batch.size, threshold) if backend == "auto" else backend
            used.add(name)
            mask[batch.nodes] = batch.solve(name, profits, an.runnable)
        yield lam, mask, "+".join(sorted(used)) or "trivial"


def select_mincut(
    problem: SelectionProblem,
    lam: float,
    *,
    backend: str = "auto",
    threshold: int = _DEFAULT_THRESHOLD,
) -> Selection:
    """The exact optimum of SPEC §5, and among optima the smallest closure.

    ``backend="auto"`` solves each network below ``threshold`` nodes+arcs with igraph and
    larger ones with OR-tools; the answer does not depend on the backend.
    """
    an = analyse(problem)
    [(lam_f, mask, used)] = list(_mincut_masks(an, [lam], backend, threshold))
    return _selection(an, mask, lam_f, used)


def select_sweep(
    problem: SelectionProblem,
    lams: Sequence[float],
    *,
    backend: str = "auto",
    threshold: int = _DEFAULT_THRESHOLD,
) -> list[Selection]:
    """``select_mincut`` for each λ, analysing the problem once.

    Validation, the requirement-graph levels and the blocked candidates do not depend on λ
    and are shared. The other reductions depend on λ through ``p``, so each λ sweeps them
    again and builds the network of what they leave, which is small next to the problem.
    """
    an = analyse(problem)
    return [
        _selection(an, mask, lam, used)
        for lam, mask, used in _mincut_masks(an, lams, backend, threshold)
    ]


def select_greedy(problem: SelectionProblem, lam: float) -> Selection:
    """Myopic baseline for the min-cut ablation (SPEC §7).

    Candidates are taken in a topological order of the requirement graph, and i is selected
    iff it is runnable, ``p_i > 0`` and every candidate it requires was selected. It never
    pays for a negative-profit predecessor, so a cheap-to-skip but expensive prerequisite
    blocks every profitable descendant behind it — exactly where min-cut gains. The rule is
    equivalent to "no ancestor-or-self is unrunnable or has ``p ≤ 0``", which is how it is
    computed (one reachability pass), so the result does not depend on the order chosen.
    """
    an = analyse(problem)
    lam_f = _check_lam(lam, an.costs)
    profits, _ = scaled(an, lam_f)
    blocked = an.blocked | an.reach.down(~an.blocked & (profits <= 0))
    return _selection(an, ~blocked, lam_f, "greedy")


def select_all(problem: SelectionProblem, lam: float) -> Selection:
    """ "Repair all" reference: every candidate that can run, whatever it costs.

    A candidate can run when it is executable, is not on a requirement cycle, and the same
    holds for everything it transitively requires. λ only enters the reported objective.
    """
    an = analyse(problem)
    lam_f = _check_lam(lam, an.costs)
    return _selection(an, ~an.blocked, lam_f, "all")


# --------------------------------------------------------------------------- the frontier


@dataclass(frozen=True)
class FrontierStep:
    """One step of the trade-off over λ: for every λ with ``lam_from < λ < lam_to`` the
    smallest optimum is ``selected`` (``lam_to`` None: no upper end).

    At a breakpoint both neighbouring selections are optimal and ties are not repaired,
    so the engine takes the smaller: the next step's (in a degenerate case, where three
    or more lines meet, a set optimal only at that point; ``select_mincut`` at exactly
    the breakpoint says which).
    """

    lam_from: float
    lam_to: float | None
    selected: tuple[bool, ...]
    repair: float  # sum of w over the selection
    cost: float  # sum of c over the selection


#: Most closures the frontier search may solve per candidate before it gives up (it needs
#: at most two per breakpoint plus three, and there are at most n + 1 steps).
_FRONTIER_SOLVES_PER_CANDIDATE: Final = 4


def frontier(
    problem: SelectionProblem, *, backend: str = "auto", threshold: int = _DEFAULT_THRESHOLD
) -> list[FrontierStep]:
    """Every selection the exact min-cut makes as λ runs from 0 up, and the λ where it
    changes: the upper envelope of the closures' lines ``Σw - λ·Σc`` (parametric
    max-weight closure), found exactly rather than on a grid.

    As λ grows the smallest optimum only shrinks (it is nested), so the envelope has at
    most n + 1 lines. Each is found by solving at the crossing of two known lines
    (Eisner and Severance): when no closure beats them there, the crossing is a
    breakpoint; otherwise the better closure is a new line and both halves are searched
    again. Comparisons use the selector's own integer profits (``scaled``), so the
    breakpoints are exact up to its profit resolution, and each step's selection is what
    ``select_mincut`` returns for every λ inside it. Steps run from λ = 0 (the largest
    selection) to the one kept at the largest λ the selector accepts (``MAX_LAM_COST``
    over the largest cost; for ordinary figures, only the zero-cost candidates).
    """
    an = analyse(problem)
    _check_backend(backend)
    budget = _FRONTIER_SOLVES_PER_CANDIDATE * (an.n + 1) + 3
    solves = 0

    def solve(lam: float) -> BoolArray:
        nonlocal solves
        solves += 1
        if solves > budget:
            raise RuntimeError("the frontier search did not converge (selector inconsistent)")
        [(_, mask, _)] = list(_mincut_masks(an, [lam], backend, threshold))
        return mask

    first = solve(0.0)
    largest = float(an.costs.max(initial=0.0))
    if _cost(an, first) == 0 or largest == 0:
        return _steps(an, [first])
    # The last step: what is kept at the largest λ the selector accepts (for ordinary
    # figures, only what costs nothing); no event can run at a larger λ.
    top = MAX_LAM_COST / largest
    while top * largest > MAX_LAM_COST:  # the division may round up
        top = math.nextafter(top, 0.0)
    last = solve(top)
    return _steps(an, [first, *_crossings(an, first, last, solve, top), last])


def _cost(an: Analysis, mask: BoolArray) -> float:
    return float(an.costs[mask].sum())


def _crossings(
    an: Analysis,
    left: BoolArray,
    right: BoolArray,
    solve: Callable[[float], BoolArray],
    top: float,
) -> list[BoolArray]:
    """The closures on the envelope strictly between ``left`` (dearer) and ``right``,
    searched up to ``top``, the largest λ the selector accepts (beyond it two lines can
    cross only through rounding at the profit resolution, and no event runs there)."""
    found: list[BoolArray] = []
    pending = [(left, right)]
    while pending:
        a, b = pending.pop()
        lam = _crossing(an, a, b)
        if lam is None or lam > top:
            continue
        m = solve(lam)
        profits, _ = scaled(an, lam)
        best = max(int(profits[a].sum()), int(profits[b].sum()))
        if int(profits[m].sum()) > best and not (m == a).all() and not (m == b).all():
            found.append(m)
            pending += [(a, m), (m, b)]
    return found


def _crossing(an: Analysis, a: BoolArray, b: BoolArray) -> float | None:
    """Where the lines of closures ``a`` (dearer) and ``b`` meet, clipped to λ >= 0
    (None: ``a`` is not dearer, so the lines never cross going up)."""
    dc = _cost(an, a) - _cost(an, b)
    if dc <= 0:
        return None
    return max(0.0, (float(an.weights[a].sum()) - float(an.weights[b].sum())) / dc)


def _steps(an: Analysis, lines: Sequence[BoolArray]) -> list[FrontierStep]:
    """The upper envelope of the closures' lines over λ >= 0, as steps.

    Lines are taken dearest first; one that is never strictly on top (its crossing with
    the next comes no later than with the previous: rounding at the selector's profit
    resolution) is dropped, as in any convex-hull pass.
    """
    hull: list[BoolArray] = []
    ordered = sorted(lines, key=lambda m: (-_cost(an, m), -float(an.weights[m].sum()), m.sum()))
    for mask in ordered:
        if hull and _cost(an, hull[-1]) == _cost(an, mask):
            continue  # same cost: the better line (or the smaller closure) came first
        while len(hull) >= 2 and _at(an, hull[-2], hull[-1]) >= _at(an, hull[-1], mask):
            hull.pop()
        hull.append(mask)
    steps: list[FrontierStep] = []
    for k, mask in enumerate(hull):
        steps.append(
            FrontierStep(
                lam_from=_at(an, hull[k - 1], mask) if k else 0.0,
                lam_to=_at(an, mask, hull[k + 1]) if k + 1 < len(hull) else None,
                selected=tuple(mask.tolist()),
                repair=float(an.weights[mask].sum()),
                cost=_cost(an, mask),
            )
        )
    return steps


def _at(an: Analysis, a: BoolArray, b: BoolArray) -> float:
    crossing = _crossing(an, a, b)
    assert crossing is not None  # the hull holds strictly decreasing costs
    return crossing


# --------------------------------------------------------------------------- the repair's step


@dataclass(frozen=True)
class EventSelection:
    """What one event selects: S by uid, and the figures of the run and of Repair-all."""

    selected: tuple[str, ...]  # uids of S, in family (uid) order
    result: Selection
    repair_all: Selection


def selection_problem(
    family: CandidateFamily, weight: Callable[[Candidate], float] | None = None
) -> tuple[SelectionProblem, list[str]]:
    """The problem over D+ by position, and the uid of each position.

    This is the one place where candidates (known by uid everywhere else) become array
    positions. ``weight`` replaces the candidates' values: the BFCL bench weighs them by
    what Repair-all published to bound every selection's recovery.
    """
    repairable = family.repairable
    position = {c.uid: k for k, c in enumerate(repairable)}
    requires = [
        (position[j], position[i])
        for j, i in family.requirement_edges
        if j in position and i in position
    ]
    problem = SelectionProblem(
        weights=[weight(c) if weight else c.value for c in repairable],
        costs=[c.cost for c in repairable],
        executable=[c.executable for c in repairable],
        requires=requires,
    )
    return problem, [c.uid for c in repairable]


def select(
    family: CandidateFamily,
    lam: float,
    selector: Selector,
    *,
    backend: str = "auto",
    threshold: int = _DEFAULT_THRESHOLD,
) -> EventSelection:
    """Select S from the family with the event's selector at its lambda."""
    problem, uids = selection_problem(family)
    if selector == "mincut":
        result = select_mincut(problem, lam, backend=backend, threshold=threshold)
    elif selector == "greedy":
        result = select_greedy(problem, lam)
    elif selector == "all":
        result = select_all(problem, lam)
    else:
        result = Selection(tuple(False for _ in uids), 0.0, 0.0, 0.0, "none")
    in_s = tuple(uid for uid, x in zip(uids, result.selected, strict=True) if x)
    return EventSelection(in_s, result, select_all(problem, lam))
