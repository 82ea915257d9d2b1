"""The retrieval workloads: look-ups an agent makes to redo tasks, before and after an event.

What an agent reuses for a task: the task summary, its chain skills and caches, and for
each tool the task uses the tool summary and prompt skill; plus the neural router.

Use is skewed, as in deployed memory: ``popularity`` ranks the tasks in a seeded order
(independent of any event) and gives the task of rank r the weight 1/r (Zipf), spread
evenly over what an agent reuses for it. Two workloads are drawn from that one
distribution with different seeds, so they are held apart:

- ``pre_workload``: ``size`` look-ups over the whole memory before the event, from which
  the engine learns its values (use recording);
- ``workload``: ``size`` look-ups after the event over the affected tasks' reusable
  artifacts (every task with an artifact in C(F)), seeded by the event id, so every
  system sees the same one; exposure, availability and useful recovery are measured on it.
"""

from __future__ import annotations

import random
from collections.abc import Iterable

from bench.bfcl.builder import (
    NEURAL_UID,
    Memory,
    prompt_uid,
    summary_uid,
    tool_summary_uid,
)
from memorepair.model import Kind

DEFAULT_SIZE = 64


def task_lookups(memory: Memory, task_ids: Iterable[str]) -> list[str]:
    """The uids an agent reuses for the given tasks (sorted, deduplicated, existing only)."""
    wanted = set(task_ids)
    by_uid = memory.by_uid()
    uids: set[str] = {NEURAL_UID}
    for a in memory.artifacts:
        task = a.meta.get("task")
        if task in wanted and (a.kind in (Kind.CACHE, Kind.SKILL) or a.uid == summary_uid(task)):
            uids.add(a.uid)
            tool = a.meta.get("tool")
            if isinstance(tool, str):
                uids.update({tool_summary_uid(tool), prompt_uid(tool)})
    return sorted(u for u in uids if u in by_uid)


def affected_tasks(memory: Memory, cascade: set[str]) -> list[str]:
    return sorted(
        {str(a.meta["task"]) for a in memory.artifacts if a.uid in cascade and "task" in a.meta}
    )


def popularity(memory: Memory, seed: int = 7) -> dict[str, float]:
    """Each reusable artifact's share of look-ups (see the module): Zipf over tasks in a
    seeded order, a task's weight spread evenly over what it reuses; sums to 1."""
    tasks = sorted(t.id for t in memory.tasks)
    random.Random(f"popularity/{seed}").shuffle(tasks)
    weights: dict[str, float] = {}
    for rank, task in enumerate(tasks, start=1):
        pool = task_lookups(memory, [task])
        for uid in pool:
            weights[uid] = weights.get(uid, 0.0) + 1.0 / rank / len(pool)
    total = sum(weights.values())
    return {uid: w / total for uid, w in sorted(weights.items())}


def pre_workload(memory: Memory, weights: dict[str, float], size: int, seed: int = 7) -> list[str]:
    """``size`` look-ups over the whole memory before any event, drawn by popularity."""
    uids = sorted(weights)
    rng = random.Random(f"pre/{seed}")
    return rng.choices(uids, weights=[weights[u] for u in uids], k=size)


def workload(
    memory: Memory,
    cascade: set[str],
    event_id: str,
    size: int = DEFAULT_SIZE,
    weights: dict[str, float] | None = None,
) -> list[str]:
    """``size`` seeded look-ups (uids) over the affected tasks' reusable artifacts, drawn
    by ``weights`` (popularity; uniform without)."""
    tasks = affected_tasks(memory, cascade)
    if not tasks:  # e.g. a migration of a tool no task used: the agent still routes
        tasks = sorted({t.id for t in memory.tasks})
    pool = task_lookups(memory, tasks)
    rng = random.Random(f"workload/{event_id}")
    if weights is None:
        return [rng.choice(pool) for _ in range(size)]
    return rng.choices(pool, weights=[weights.get(u, 0.0) for u in pool], k=size)
