"""Small graph routines shared by import, the mode map and execution (pure, linear)."""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from typing import TypeVar

N = TypeVar("N", bound=Hashable)


def topological(nodes: Sequence[N], edges: Iterable[tuple[N, N]]) -> tuple[list[N], list[N]]:
    """Kahn's order for edges (before, after), stable in the given node order.

    Returns the order and the nodes left over, which lie on or behind a cycle. Edges whose
    ends are not both in `nodes` are ignored, and parallel edges count once.
    """
    position = {node: k for k, node in enumerate(nodes)}
    pending = [0] * len(nodes)
    children: list[list[int]] = [[] for _ in nodes]
    for before, after in set(edges):
        if before in position and after in position:
            children[position[before]].append(position[after])
            pending[position[after]] += 1
    ready = [k for k in range(len(nodes)) if pending[k] == 0]
    order: list[int] = []
    while ready:
        level: list[int] = []
        for k in ready:
            order.append(k)
            for child in children[k]:
                pending[child] -= 1
                if pending[child] == 0:
                    level.append(child)
        ready = sorted(level)
    placed = set(order)
    return [nodes[k] for k in order], [node for k, node in enumerate(nodes) if k not in placed]
