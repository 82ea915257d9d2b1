"""SPEC §4: the mode map and the candidate family Q, as pure functions.

Input is the withdrawn cascade as plain data plus the visibility of the inputs outside
it; output is one `Candidate` per descendant with its mode mu_i, required predecessors
P_i, executability v_i, value w_i and cost c_i, and the requirement edges (j, i).

Support classes for an input p of a descendant i:
- *affected*: p is a descendant in D(F); i needs p's successor (p is in P_i);
- *replacement*: p is a root of a `correct`/`migrate` event; its X_delta stands in;
- *retained*: p is outside C(F) and served;
- *invalid*: a deleted root, or anything outside C(F) that is not served.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from memorepair.graphs import on_cycles, topological
from memorepair.model import Arch, EventType, Kind, Mode, Recipe


@dataclass(frozen=True)
class CascadeNode:
    """One withdrawn version of the event's cascade, as the mode map needs it."""

    vid: str
    uid: str
    version: int
    kind: Kind
    arch: Arch | None
    value: float | None
    repair_cost: float | None
    recipe: Recipe | None
    inputs: tuple[str, ...]
    root: bool
    #: When this version was written (epoch seconds; None: unknown), for value from use.
    created: float | None = None
    #: Measured build + validation seconds of this version, if a repair built it.
    work_s: float | None = None

    @property
    def replayable(self) -> bool:
        return self.recipe is not None


@dataclass(frozen=True)
class Candidate:
    """q_i for one descendant, identified by its uid in every step of a repair."""

    uid: str
    vid: str  # the withdrawn version it would replace
    mode: Mode
    #: The operator that builds and validates its successor (None: remove, or none accepts).
    operator: str | None
    executable: bool
    reason: str
    value: float
    cost: float
    requires: tuple[str, ...]  # P_i: affected inputs whose successors i consumes
    #: Where w and c came from: explicit, use / work / median, or prior (values.py).
    value_source: str = "prior"
    cost_source: str = "prior"
    #: Its kind, or `skill.<arch>`: the key of the per-kind priors and of measured work.
    table_key: str = ""


@dataclass(frozen=True)
class CandidateFamily:
    """Q_rho: candidates of D(F) by uid (removed ones included, mode remove) and E^req."""

    candidates: tuple[Candidate, ...]  # sorted by uid
    requirement_edges: tuple[tuple[str, str], ...]  # (j, i): j's successor before i's
    root_vids: Mapping[str, str]  # uid -> withdrawn version id of each root in F
    by_uid: Mapping[str, Candidate] = field(default_factory=dict)

    @property
    def roots(self) -> tuple[str, ...]:
        return tuple(sorted(self.root_vids))

    @property
    def repairable(self) -> list[Candidate]:
        """D+: candidates whose mode is not remove."""
        return [c for c in self.candidates if c.mode is not Mode.REMOVE]


#: Mode of an input not decided yet: only possible on an (invalid) influence cycle.
_PENDING = (Mode.REGEN, "")

#: Which operator would take a node in a mode (its name), None when none accepts it.
OperatorFor = Callable[[Mode, "CascadeNode"], str | None]
#: A node's default w from its prior: (figure, source), e.g. value from use.
Derive = Callable[["CascadeNode", float], tuple[float, str]]
#: A node's default c from its prior and the operator that would build it, e.g. measured.
DeriveCost = Callable[["CascadeNode", float, str | None], tuple[float, str]]


def _prior(node: CascadeNode, prior: float) -> tuple[float, str]:
    return prior, "prior"


def _prior_cost(node: CascadeNode, prior: float, operator: str | None) -> tuple[float, str]:
    return prior, "prior"


def table_key(kind: Kind, arch: Arch | None) -> str:
    return f"skill.{arch.value}" if kind is Kind.SKILL and arch else kind.value


def build_candidates(
    nodes: Sequence[CascadeNode],
    event_type: EventType,
    served_outside: Mapping[str, bool],
    *,
    default_value: Callable[[str], float],
    default_cost: Callable[[str], float],
    operator_for: OperatorFor,
    value_of: Derive = _prior,
    cost_of: DeriveCost = _prior_cost,
) -> CandidateFamily:
    """The deterministic mode map Phi and the candidates q_i for every descendant.

    `served_outside` maps each input uid outside C(F) to whether it is currently served.
    `default_value`/`default_cost` give the per-kind priors; `value_of`/`cost_of` turn a
    node's prior (and, for c, the operator that would build it) into its default w/c with
    a source (values.py); explicit figures win.
    """
    descendants = sorted((n for n in nodes if not n.root), key=lambda n: n.uid)
    modes, acyclic = _modes(nodes, descendants, event_type, served_outside)
    priors = (default_value, default_cost, value_of, cost_of)
    candidates = [_candidate(node, modes, priors, operator_for) for node in descendants]
    edges = [(j, c.uid) for c in candidates for j in c.requires]
    # The requirements are affected-input edges: none on a cycle when those have none.
    cyclic: set[str] = set() if acyclic else on_cycles([c.uid for c in candidates], edges)
    candidates = [
        replace(c, executable=False, reason="on a cycle of the requirement graph")
        if c.uid in cyclic
        else c
        for c in candidates
    ]
    root_vids = {n.uid: n.vid for n in nodes if n.root}
    by_uid = {c.uid: c for c in candidates}
    return CandidateFamily(tuple(candidates), tuple(edges), root_vids, by_uid)


def _modes(
    nodes: Sequence[CascadeNode],
    descendants: Sequence[CascadeNode],
    event_type: EventType,
    served_outside: Mapping[str, bool],
) -> tuple[dict[str, tuple[Mode, str]], bool]:
    """Each descendant's mode and why, decided input-first (a removed input counts), and
    whether the affected-input edges are acyclic (every descendant found its place)."""
    roots = {n.uid for n in nodes if n.root}
    inside = {n.uid for n in descendants}

    def support_class(uid: str) -> str:
        if uid in inside:
            return "affected"
        if uid in roots:
            return "invalid" if event_type is EventType.DELETE else "replacement"
        return "retained" if served_outside.get(uid, False) else "invalid"

    by_uid = {n.uid: n for n in descendants}
    modes: dict[str, tuple[Mode, str]] = {}
    order, leftover = _input_first(descendants, inside)
    for uid in order + leftover:
        classes = [
            "removed" if c == "affected" and modes.get(u, _PENDING)[0] is Mode.REMOVE else c
            for u, c in ((u, support_class(u)) for u in by_uid[uid].inputs)
        ]
        modes[uid] = _mode(by_uid[uid], classes)
    return modes, not leftover


def _candidate(
    node: CascadeNode,
    modes: Mapping[str, tuple[Mode, str]],
    priors: tuple[Callable[[str], float], Callable[[str], float], Derive, DeriveCost],
    operator_for: OperatorFor,
) -> Candidate:
    mode, reason = modes[node.uid]
    # P_i: the affected inputs whose successors the operator consumes. A removed
    # descendant is dropped from a regen/param support like a deleted root; a replay
    # that needs one was given mode remove, so P_i never leaves D+.
    requires: tuple[str, ...] = ()
    operator = None
    if mode is not Mode.REMOVE:
        requires = tuple(u for u in node.inputs if u in modes and modes[u][0] is not Mode.REMOVE)
        operator = operator_for(mode, node)
    executable = operator is not None
    if mode is not Mode.REMOVE and not executable:
        reason = f"no {mode.value} operator accepts this artifact"
    default_value, default_cost, value_of, cost_of = priors
    key = table_key(node.kind, node.arch)
    value, value_source = (
        (node.value, "explicit") if node.value is not None else value_of(node, default_value(key))
    )
    cost, cost_source = (
        (node.repair_cost, "explicit")
        if node.repair_cost is not None
        else cost_of(node, default_cost(key), operator)
    )
    return Candidate(
        uid=node.uid,
        vid=node.vid,
        mode=mode,
        operator=operator,
        executable=executable,
        reason=reason,
        value=value,
        cost=cost,
        requires=requires,
        value_source=value_source,
        cost_source=cost_source,
        table_key=key,
    )


def _mode(node: CascadeNode, classes: Sequence[str]) -> tuple[Mode, str]:
    usable = sum(1 for c in classes if c not in ("invalid", "removed"))
    if node.replayable:
        if "invalid" in classes:
            return Mode.REMOVE, "replay recipe consumes invalidated support"
        if "removed" in classes:
            return Mode.REMOVE, "replay recipe consumes a removed descendant"
        return Mode.RECOMPUTE, "replayable: recompute from its recipe"
    if node.kind is Kind.SUMMARY or (
        node.kind is Kind.SKILL and node.arch in (Arch.PROMPT, Arch.CHAIN)
    ):
        if usable == 0:
            return Mode.REMOVE, "no retained support left to regenerate from"
        return Mode.REGEN, "regenerate from retained support"
    if node.kind is Kind.SKILL and node.arch is Arch.NEURAL:
        if usable == 0:
            return Mode.REMOVE, "empty retain partition: nothing to retrain on"
        return Mode.PARAM, "retrain on the retain partition"
    return Mode.REMOVE, f"no repair mode for a derived {node.kind.value} without a recipe"


def _input_first(nodes: Sequence[CascadeNode], inside: set[str]) -> tuple[list[str], list[str]]:
    """Descendants with every affected input before its dependents, and those left over
    (on or behind a cycle), which go last."""
    edges = [(u, n.uid) for n in nodes for u in n.inputs if u in inside]
    return topological(sorted(n.uid for n in nodes), edges)
