"""The built memory's influence graph as plain data: cascades, DAG check, depth.

Independent of the engine on purpose: the harness needs C(F) as it was when an event
fired, to tell an invalidated artifact from a repaired one, and the tests need to check
provenance without a database.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping, Sequence

from memorepair.errors import CycleError, InputError
from memorepair.model import ArtifactIn, EdgeIn


def influence_children(
    artifacts: Sequence[ArtifactIn], edges: Iterable[EdgeIn] = ()
) -> dict[str, list[str]]:
    """uid -> influence successors (from ``inputs`` and standalone INFLUENCES edges)."""
    children: dict[str, list[str]] = {a.uid: [] for a in artifacts}
    for a in artifacts:
        for u in a.inputs:
            if u not in children:
                raise InputError(f"{a.uid} lists unknown input {u!r}")
            children[u].append(a.uid)
    for e in edges:
        if e.rel == "INFLUENCES":
            if e.src not in children or e.dst not in children:
                raise InputError(f"edge {e.src} -> {e.dst} names an unknown artifact")
            children[e.src].append(e.dst)
    return children


def cascade(children: Mapping[str, Sequence[str]], roots: Iterable[str]) -> set[str]:
    """C(F): everything reachable from the roots over INFLUENCES, roots included."""
    seen = set(roots)
    todo = deque(seen)
    while todo:
        for v in children.get(todo.popleft(), ()):
            if v not in seen:
                seen.add(v)
                todo.append(v)
    return seen


def topological_order(children: Mapping[str, Sequence[str]]) -> list[str]:
    """Kahn's order (ties by uid, so deterministic); ``CycleError`` if not a DAG."""
    indegree = {u: 0 for u in children}
    for vs in children.values():
        for v in vs:
            indegree[v] += 1
    ready = sorted(u for u, d in indegree.items() if d == 0)
    order: list[str] = []
    while ready:
        u = ready.pop()
        order.append(u)
        for v in children[u]:
            indegree[v] -= 1
            if indegree[v] == 0:
                ready.append(v)
    if len(order) != len(children):
        raise CycleError(f"influence graph has a cycle through {len(children) - len(order)} nodes")
    return order


def depth(children: Mapping[str, Sequence[str]]) -> int:
    """Length (in edges) of the longest influence path."""
    level = dict.fromkeys(children, 0)
    for u in topological_order(children):
        for v in children[u]:
            level[v] = max(level[v], level[u] + 1)
    return max(level.values(), default=0)
