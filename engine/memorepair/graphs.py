"""Small graph routines shared by import, the mode map and execution (pure, linear), and
the collector pause that building big graphs and their rows needs."""

from __future__ import annotations

import gc
import threading
from collections.abc import Hashable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import TypeVar

N = TypeVar("N", bound=Hashable)

_pauses = 0
_resume = False
_pause_lock = threading.Lock()


@contextmanager
def collector_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector while a repair or an import runs.

    Both allocate hundreds of thousands of small, long-lived objects (rows, artifacts,
    candidates), and each full collection walks all of them: about a fifth of a
    100k-node repair, and 13-15% of a 20k-item `record_many`. Reference counting still
    frees everything acyclic at once; cycles are collected when the collector resumes.
    Pauses nest across threads: the collector resumes when the last one ends, and only
    if it was running when the first began.
    """
    global _pauses, _resume
    with _pause_lock:
        if _pauses == 0:
            _resume = gc.isenabled()
            gc.disable()
        _pauses += 1
    try:
        yield
    finally:
        with _pause_lock:
            _pauses -= 1
            if _pauses == 0 and _resume:
                gc.enable()


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


def on_cycles(nodes: Sequence[N], edges: Iterable[tuple[N, N]]) -> set[N]:
    """Members of strongly connected components with more than one node (iterative Tarjan).

    Edges whose ends are not both in `nodes` are ignored.
    """
    position = {node: k for k, node in enumerate(nodes)}
    adjacency: list[list[int]] = [[] for _ in nodes]
    for before, after in edges:
        if before in position and after in position:
            adjacency[position[before]].append(position[after])
    return {nodes[k] for k in _cyclic(adjacency)}


def _cyclic(adjacency: list[list[int]]) -> set[int]:
    n = len(adjacency)
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
