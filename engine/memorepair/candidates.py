"""Step 3: the mode map and the candidate family Q (SPEC §4), as pure functions.

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
from dataclasses import dataclass, field

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

    @property
    def replayable(self) -> bool:
        return self.recipe is not None


@dataclass(frozen=True)
class Candidate:
    index: int
    vid: str
    uid: str
    mode: Mode
    executable: bool
    reason: str
    value: float
    cost: float
    requires: tuple[str, ...]  # uids in P_i (affected inputs whose successors i consumes)


@dataclass(frozen=True)
class CandidateFamily:
    """Q_rho: candidates of D(F) (removed ones included, with mode remove) and E^req."""

    candidates: tuple[Candidate, ...]
    requirement_edges: tuple[tuple[int, int], ...]  # (j, i): j's successor before i
    root_vids: Mapping[str, str]  # uid -> withdrawn version id of each root in F
    by_uid: Mapping[str, int] = field(default_factory=dict)

    @property
    def roots(self) -> tuple[str, ...]:
        return tuple(sorted(self.root_vids))

    @property
    def repairable(self) -> list[Candidate]:
        """D+: candidates whose mode is not remove."""
        return [c for c in self.candidates if c.mode is not Mode.REMOVE]


#: Mode of an input not decided yet: only possible on an (invalid) influence cycle.
_PENDING = (Mode.REGEN, "")


def table_key(kind: Kind, arch: Arch | None) -> str:
    return f"skill.{arch.value}" if kind is Kind.SKILL and arch else kind.value


def build_candidates(
    nodes: Sequence[CascadeNode],
    event_type: EventType,
    served_outside: Mapping[str, bool],
    *,
    default_value: Callable[[str], float],
    default_cost: Callable[[str], float],
    operator_available: Callable[[Mode, CascadeNode], bool] = lambda mode, node: True,
) -> CandidateFamily:
    """The deterministic mode map Phi and the candidates q_i for every descendant.

    `served_outside` maps each input uid outside C(F) to whether it is currently served.
    """
    roots = {n.uid for n in nodes if n.root}
    descendants = sorted((n for n in nodes if not n.root), key=lambda n: n.uid)
    in_descendants = {n.uid for n in descendants}

    def support_class(uid: str) -> str:
        if uid in in_descendants:
            return "affected"
        if uid in roots:
            return "invalid" if event_type is EventType.DELETE else "replacement"
        return "retained" if served_outside.get(uid, False) else "invalid"

    by_uid = {n.uid: n for n in descendants}
    modes: dict[str, tuple[Mode, str]] = {}
    for uid in _input_first(descendants, in_descendants):
        node = by_uid[uid]
        classes = [
            "removed" if c == "affected" and modes.get(u, _PENDING)[0] is Mode.REMOVE else c
            for u, c in ((u, support_class(u)) for u in node.inputs)
        ]
        modes[uid] = _mode(node, classes)

    index = {n.uid: i for i, n in enumerate(descendants)}
    candidates: list[Candidate] = []
    edges: list[tuple[int, int]] = []
    for node in descendants:
        mode, reason = modes[node.uid]
        # P_i: the affected inputs whose successors the operator consumes. A removed
        # descendant is dropped from a regen/param support like a deleted root; a replay
        # that needs one was given mode remove above, so P_i never leaves D+.
        requires = tuple(
            u for u in node.inputs if u in in_descendants and modes[u][0] is not Mode.REMOVE
        )
        executable = mode is not Mode.REMOVE
        if executable and not operator_available(mode, node):
            executable, reason = False, f"no {mode.value} operator accepts this artifact"
        key = table_key(node.kind, node.arch)
        candidates.append(
            Candidate(
                index=index[node.uid],
                vid=node.vid,
                uid=node.uid,
                mode=mode,
                executable=executable,
                reason=reason,
                value=node.value if node.value is not None else default_value(key),
                cost=node.repair_cost if node.repair_cost is not None else default_cost(key),
                requires=requires if mode is not Mode.REMOVE else (),
            )
        )
        if mode is not Mode.REMOVE:
            edges += [(index[u], index[node.uid]) for u in requires]
    cyclic = _on_cycles(len(candidates), edges)
    if cyclic:
        candidates = [
            _not_executable(c, "on a cycle of the requirement graph") if c.index in cyclic else c
            for c in candidates
        ]
    root_vids = {n.uid: n.vid for n in nodes if n.root}
    return CandidateFamily(tuple(candidates), tuple(edges), root_vids, index)


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


def _input_first(nodes: Sequence[CascadeNode], inside: set[str]) -> list[str]:
    """Descendants with every affected input before its dependents (cycles appended last)."""
    pending = {n.uid: sum(1 for u in set(n.inputs) if u in inside) for n in nodes}
    children: dict[str, list[str]] = {}
    for n in nodes:
        for u in set(n.inputs):
            if u in inside:
                children.setdefault(u, []).append(n.uid)
    ready = sorted(uid for uid, d in pending.items() if d == 0)
    order: list[str] = []
    while ready:
        uid = ready.pop()
        order.append(uid)
        for child in children.get(uid, ()):
            pending[child] -= 1
            if pending[child] == 0:
                ready.append(child)
    seen = set(order)
    return order + sorted(uid for uid in pending if uid not in seen)


def _not_executable(c: Candidate, reason: str) -> Candidate:
    return Candidate(c.index, c.vid, c.uid, c.mode, False, reason, c.value, c.cost, c.requires)


def _on_cycles(n: int, edges: Sequence[tuple[int, int]]) -> set[int]:
    """Members of strongly connected components with more than one node (iterative Tarjan)."""
    adjacency: list[list[int]] = [[] for _ in range(n)]
    for j, i in edges:
        adjacency[j].append(i)
    index_of = [-1] * n
    low = [0] * n
    on_stack = [False] * n
    stack: list[int] = []
    counter = 0
    cyclic: set[int] = set()
    for start in range(n):
        if index_of[start] != -1:
            continue
        work = [(start, 0)]
        while work:
            v, child = work.pop()
            if child == 0:
                index_of[v] = low[v] = counter
                counter += 1
                stack.append(v)
                on_stack[v] = True
            recurse = False
            for k in range(child, len(adjacency[v])):
                w = adjacency[v][k]
                if index_of[w] == -1:
                    work.append((v, k + 1))
                    work.append((w, 0))
                    recurse = True
                    break
                if on_stack[w]:
                    low[v] = min(low[v], index_of[w])
            if recurse:
                continue
            if work and work[-1][1] > 0:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[v])
            if low[v] == index_of[v]:
                component = []
                while True:
                    w = stack.pop()
                    on_stack[w] = False
                    component.append(w)
                    if w == v:
                        break
                if len(component) > 1:
                    cyclic.update(component)
    return cyclic
