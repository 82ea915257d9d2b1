"""Min-cut backend benchmark on synthetic cascade-shaped closure problems (not a test).

Why: the selection step must stay exact at a million candidates, and the choice between
igraph and OR-tools (``select_mincut(backend="auto")``) rests on how each scales on the
networks a cascade actually produces. Run::

    PYTHONPATH=engine python -m bench.selection_bench --max-size 1000000

Each problem is layered like a cascade by hop distance: every candidate below the first
layer requires one to nine candidates of earlier layers (mostly the previous one), upper
layers are costly to regenerate and leaves are valuable, so the optimum pays for some
negative-profit predecessors. Every backend solves the same network: the whole, unreduced
problem with all components in one batch, so the backends are compared like for like; the
solver time covers building the library's graph, the max flow and extracting the minimal
source side. ``e2e ort`` is ``select_mincut`` from the ``SelectionProblem``, which first
settles most candidates by exact reductions and gives only the rest to the min-cut; the
lines below the table say how much each reduction removed. networkx (``minimum_cut``,
preflow-push) is run only up to ``--networkx-max-size`` and stops for larger sizes once one
run exceeds ``--networkx-timeout`` seconds.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable, Sequence
from functools import partial
from typing import TypeVar

import numpy as np

from memorepair import selection as sel

T = TypeVar("T")


def cascade_problem(n: int, *, depth: int = 12, seed: int = 0) -> sel.SelectionProblem:
    """A layered DAG of ``n`` candidates with 1-9 requirements each below the first layer."""
    rng = np.random.default_rng(seed)
    widths = np.maximum(
        1, np.round(np.geomspace(1, 4, depth) * n / np.geomspace(1, 4, depth).sum())
    )
    layer = np.minimum(np.searchsorted(np.cumsum(widths), np.arange(n), side="right"), depth - 1)
    first = np.searchsorted(layer, np.arange(depth))  # index of each layer's first candidate
    degree = np.where(layer > 0, rng.integers(1, 10, n), 0)
    tails = np.repeat(np.arange(n), degree)  # i, the candidate that requires
    lay = layer[tails]
    # Mostly the previous layer, sometimes any earlier one.
    back = np.where(rng.random(len(tails)) < 0.8, 1, rng.integers(1, np.maximum(lay, 1) + 1))
    src_layer = np.maximum(lay - back, 0)
    lo = first[src_layer]
    hi = np.where(src_layer + 1 < depth, first[np.minimum(src_layer + 1, depth - 1)], n)
    j = lo + (rng.random(len(tails)) * (hi - lo)).astype(np.int64)
    keep = j != tails
    requires = np.stack([j[keep], tails[keep]], axis=1)
    requires = np.unique(requires, axis=0)
    depth_frac = layer / max(depth - 1, 1)
    weights = np.round(rng.integers(0, 10, n) * depth_frac + rng.random(n), 2)
    costs = np.round(rng.uniform(0.5, 6.0, n) * (1.5 - depth_frac), 2)
    executable = rng.random(n) < 0.97
    return sel.SelectionProblem(
        weights=weights.tolist(),
        costs=costs.tolist(),
        executable=executable.tolist(),
        requires=[(int(a), int(b)) for a, b in requires.tolist()],
    )


def network(
    problem: sel.SelectionProblem, lam: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray, int, int, int, np.ndarray]:
    an = sel.analyse(problem)
    batches, _ = an.batches(threshold=2**62)
    [batch] = batches
    profits, _ = sel.scaled(an, lam)
    tails, heads = batch.arcs()
    k = len(batch.nodes)
    return tails, heads, batch.capacities(profits, an.runnable), k + 2, k, k + 1, batch.nodes


def reduction_shares(problem: sel.SelectionProblem, lam: float) -> dict[str, float]:
    """Fractions of the candidates each exact reduction of ``select_mincut`` settles.

    ``blocked``: unrunnable or requiring one (any λ); ``useless``: alive, but no alive
    candidate at or below it has ``p > 0``; ``forced``: in every optimum; ``left``: what
    the min-cut still decides (``left_arcs``: its requirement arcs, as a fraction of all).
    """
    an = sel.analyse(problem)
    profits, _ = sel.scaled(an, lam)
    forced, rest, within = sel.exact_reductions(an, profits)
    n = max(an.n, 1)
    alive = ~an.blocked
    useful = an.reach.up(alive & (profits > 0))
    arcs = int((rest[within.tails] & rest[within.heads]).sum())
    return {
        "blocked": float(an.blocked.sum()) / n,
        "useless": float((alive & ~useful).sum()) / n,
        "forced": float(forced.sum()) / n,
        "left": float(rest.sum()) / n,
        "left_arcs": arcs / max(len(an.req_j), 1),
    }


def networkx_mask(
    tails: np.ndarray, heads: np.ndarray, caps: np.ndarray, n: int, s: int, t: int
) -> tuple[float, np.ndarray]:
    import networkx as nx  # type: ignore[import-untyped]

    graph = nx.DiGraph()
    graph.add_nodes_from(range(n))
    graph.add_weighted_edges_from(
        zip(tails.tolist(), heads.tolist(), caps.tolist(), strict=True), weight="capacity"
    )
    value, (source_side, _) = nx.minimum_cut(graph, s, t)
    mask = np.zeros(n, dtype=bool)
    mask[list(source_side)] = True
    return float(value), mask


def _median_time(fn: Callable[[], T], repeats: int) -> tuple[float, T]:
    times = []
    for _ in range(max(repeats, 1)):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-size", type=float, default=1e5, help="largest n (1e3..1e6)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--lam", type=float, default=1.0)
    parser.add_argument("--networkx-max-size", type=float, default=1e5)
    parser.add_argument("--networkx-timeout", type=float, default=60.0)
    args = parser.parse_args(argv)

    sizes = [10**e for e in range(3, 7) if 10**e <= args.max_size]
    print(f"median of {args.repeats} runs, seconds; lam = {args.lam}")
    header = (
        f"{'n':>9} {'req arcs':>9} {'net arcs':>9} {'igraph':>8} {'ortools':>8} "
        f"{'networkx':>9} {'ig/ort':>7} {'nx/ort':>7} {'e2e ort':>8} {'agree':>5}"
    )
    print(header)
    sel.select_mincut(cascade_problem(100), args.lam, backend="ortools")  # import warm-up
    networkx_on = True
    notes = []
    shares = []
    for n in sizes:
        problem = cascade_problem(n)
        tails, heads, caps, n_nodes, s, t, _ = network(problem, args.lam)
        timing: dict[str, float] = {}
        masks: dict[str, np.ndarray] = {}
        for name, solver in sel.BACKENDS.items():
            seconds, mask = _median_time(
                partial(solver, tails, heads, caps, n_nodes, s, t), args.repeats
            )
            timing[name] = seconds
            masks[name] = np.asarray(mask)
        agree = bool(np.array_equal(masks["igraph"], masks["ortools"]))
        nx_cell = "skipped"
        nx_ratio = "-"
        if networkx_on and n <= args.networkx_max_size:
            seconds, (value, _) = _median_time(
                partial(networkx_mask, tails, heads, caps, n_nodes, s, t), args.repeats
            )
            cut = int(caps[masks["ortools"][tails] & ~masks["ortools"][heads]].sum())
            agree = agree and round(value) == cut
            nx_cell = f"{seconds:9.3f}"
            nx_ratio = f"{seconds / timing['ortools']:7.1f}"
            if seconds > args.networkx_timeout:
                networkx_on = False
                notes.append(f"networkx took {seconds:.1f} s at n={n}; skipped above")
        elif n > args.networkx_max_size:
            notes.append(f"networkx skipped at n={n} (> --networkx-max-size)")
        e2e, _ = _median_time(
            partial(sel.select_mincut, problem, args.lam, backend="ortools"), args.repeats
        )
        share = reduction_shares(problem, args.lam)
        shares.append(
            f"{n:>9}: blocked {share['blocked']:6.2%}, no p > 0 below {share['useless']:6.2%}, "
            f"forced in {share['forced']:6.3%}, left {share['left']:6.2%} "
            f"(arcs left {share['left_arcs']:6.2%})"
        )
        print(
            f"{n:>9} {len(problem.requires):>9} {len(tails):>9} {timing['igraph']:8.3f} "
            f"{timing['ortools']:8.3f} {nx_cell:>9} "
            f"{timing['igraph'] / timing['ortools']:7.1f} {nx_ratio:>7} {e2e:8.3f} "
            f"{'yes' if agree else 'NO':>5}"
        )
    for note in notes:
        print(note)
    print("e2e ort: select_mincut(backend='ortools') from SelectionProblem (validation,")
    print("exact reductions, component analysis, network build, solve of what is left);")
    print("the backend columns solve the whole unreduced network. agree: igraph mask ==")
    print("ortools mask (and networkx cut value equals it where run)")
    print("share of candidates each exact reduction settles before the min-cut:")
    for line in shares:
        print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
