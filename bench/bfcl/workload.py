"""The post-event retrieval workload: look-ups an agent makes to redo the affected tasks.

For every task with an artifact in C(F), the agent looks up what it would reuse for that
task: the task summary, its chain skills and caches, and for each tool the task uses the
tool summary and prompt skill; plus the neural router. ``size`` look-ups are drawn from
those with a generator seeded by the event id, so every system sees the same workload.
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


def workload(
    memory: Memory, cascade: set[str], event_id: str, size: int = DEFAULT_SIZE
) -> list[str]:
    """``size`` seeded look-ups (uids) over the affected tasks' reusable artifacts."""
    tasks = affected_tasks(memory, cascade)
    if not tasks:  # e.g. a migration of a tool no task used: the agent still routes
        tasks = sorted({t.id for t in memory.tasks})
    pool = task_lookups(memory, tasks)
    rng = random.Random(f"workload/{event_id}")
    return [rng.choice(pool) for _ in range(size)]
