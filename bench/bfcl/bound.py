"""An upper bound on what any selection can recover within a cost budget (the evaluation's target).

The harness measures min-cut at a few λ. Whether recovered >= 0.95 at cost_norm <= 0.6 is
reachable at all on this memory is a different question: it asks about every
predecessor-closed selection, under any selector and any λ, even one λ per event.
Lagrangian duality answers it with the engine's own exact selector.

Per event e, with R_e the successors Repair-all published and C_e its operator cost, a
closed selection S recovers r_e(S) <= |S ∩ R_e| / |R_e| (it publishes only successors it
selects, and only ones Repair-all publishes too: see ``Evaluation.outside``) at
cn_e(S) = Σ_{i∈S} c_i / C_e. For any multiplier μ >= 0 and selections whose mean cn is
at most B:

    mean r  <=  mean_e max_S (r_e(S) - μ·cn_e(S))  +  μ·B  =:  M(μ) + μ·B

and the inner max is one max-weight closure (weights 1/|R_e| on R_e, costs c_i/C_e, λ=μ),
solved exactly by ``select_sweep``. Every μ gives a valid bound; the smallest over a
grid is reported. The same M(μ) bounds the cost from below at a recovery level L:
mean cn >= (L - M(μ)) / μ.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np

from memorepair import selection
from memorepair.candidates import CandidateFamily

#: Multipliers tried: 0 and a log grid wide enough for costs and recoveries in [0, 1].
MULTIPLIERS: tuple[float, ...] = (0.0, *np.geomspace(1e-3, 1e3, 481).tolist())


@dataclass(frozen=True)
class EventClosure:
    """One event's selection problem weighted by Repair-all's outcome."""

    event: str
    problem: selection.SelectionProblem


def event_closure(
    event: str, family: CandidateFamily, published: Collection[str], cost_all: float
) -> EventClosure | None:
    """The event's problem with weights 1/|R| on Repair-all's published successors and
    costs normalised by Repair-all's cost; None when either is empty (the event has no
    recovered or cost_norm figure, and the harness's means skip it too)."""
    recovered = set(published)
    if not recovered or cost_all <= 0:
        return None
    return weighted_closure(
        event, family, {u: 1.0 / len(recovered) for u in recovered}, 1.0 / cost_all
    )


def weighted_closure(
    event: str, family: CandidateFamily, weights: Mapping[str, float], cost_scale: float
) -> EventClosure:
    """The event's problem with the given weight per uid (0 for the rest) and its
    candidates' costs times ``cost_scale``: with weights and scales shared by all events
    (a share of all look-ups, a share of all cost), the pooled figures are sums over
    events, and ``bound(..., pooled=True)`` bounds them."""
    problem, _ = selection.selection_problem(family, weight=lambda c: weights.get(c.uid, 0.0))
    return EventClosure(event, replace(problem, costs=[c * cost_scale for c in problem.costs]))


@dataclass(frozen=True)
class Bound:
    recovered_max: float  # no mean recovery above this at mean cost_norm <= budget
    budget: float
    cost_min: float  # no mean cost_norm below this at mean recovery >= level (inf: none)
    level: float
    events: int


def _best(closure: EventClosure, multipliers: Sequence[float]) -> list[float]:
    """max_S (r(S) - μ·cn(S)) per μ, rounded up by the selector's profit resolution.

    The selector compares profits rounded to 10**-k, so its optimum may fall short of the
    true one by n·10**-k. k shrinks as Σ|w - μc| grows, which is convex in μ: its largest
    value on the grid is at an end, so the coarser k of the two ends is safe for every μ.
    """
    problem = closure.problem
    ends = (min(multipliers), max(multipliers))
    coarsest = min(selection.scaled_profits(problem, mu)[1] for mu in ends)
    slack = len(problem.weights) * 10.0**-coarsest
    return [chosen.objective + slack for chosen in selection.select_sweep(problem, multipliers)]


def bound(
    closures: Sequence[EventClosure],
    budget: float,
    level: float,
    multipliers: Sequence[float] = MULTIPLIERS,
    *,
    pooled: bool = False,
) -> Bound:
    """The Lagrangian bounds over the events' mean recovery and mean cost_norm, or, with
    ``pooled``, over their sums (closures from ``weighted_closure`` with shares of the
    whole run: pooled useful recovery and total cost over Repair-all's)."""
    per_event = np.array([_best(c, multipliers) for c in closures])
    mean = per_event.sum(axis=0) if pooled else per_event.mean(axis=0)  # M(μ)
    mus = np.asarray(multipliers)
    recovered_max = float(np.min(mean + mus * budget))
    positive = mus > 0
    cost_min = float(np.max((level - mean[positive]) / mus[positive], initial=0.0))
    return Bound(
        recovered_max=min(recovered_max, 1.0),
        budget=budget,
        cost_min=max(cost_min, 0.0),
        level=level,
        events=len(closures),
    )


def frontier_bound(
    closures: Sequence[EventClosure], budget: float, level: float, *, pooled: bool = True
) -> Bound:
    """The same Lagrangian bounds, minimised over every multiplier instead of a grid.

    Each event's inner maximum max_S (r(S) - μ·cn(S)) is the upper envelope of its
    closures' lines, which ``selection.frontier`` finds exactly; their sum M(μ) is
    piecewise linear and convex, so M(μ) + μ·B is smallest, and (L - M(μ)) / μ largest,
    at one of the events' breakpoints (or μ = 0). The selector's profit resolution is
    added back as in ``_best``.
    """
    lines = []
    mus = {0.0}
    for closure in closures:
        steps = selection.frontier(closure.problem)
        mus.update(s.lam_from for s in steps)
        slack = _slack(closure.problem, [s.lam_from for s in steps])
        lines.append(
            (np.array([s.repair + slack for s in steps]), np.array([s.cost for s in steps]))
        )
    grid = np.array(sorted(mus))
    per_event = np.array([(w[:, None] - c[:, None] * grid[None, :]).max(axis=0) for w, c in lines])
    total = per_event.sum(axis=0) if pooled else per_event.mean(axis=0)  # M(μ)
    recovered_max = float(np.min(total + grid * budget))
    positive = grid > 0
    cost_min = float(np.max((level - total[positive]) / grid[positive], initial=0.0))
    if total[0] < level:  # not even everything reaches the level: (L - M(μ)) / μ -> inf
        cost_min = math.inf
    return Bound(
        recovered_max=min(recovered_max, 1.0),
        budget=budget,
        cost_min=max(cost_min, 0.0),
        level=level,
        events=len(closures),
    )


def _slack(problem: selection.SelectionProblem, lams: Sequence[float]) -> float:
    """What the selector's profit resolution may hide at these λ (see ``_best``)."""
    exponents = []
    for lam in (0.0, max(lams, default=0.0)):
        try:
            exponents.append(selection.scaled_profits(problem, lam)[1])
        except ValueError:  # beyond the λ the selector accepts: no solve happened there
            continue
    return len(problem.weights) * 10.0 ** -min(exponents, default=selection.MAX_DECIMALS)
