"""A MemoRepair memory built from BFCL multi-turn tasks, with complete influence provenance.

Per task: user-turn records, one tool-call record per ground-truth call, one cache per
call (its output from actually executing the ground-truth chain on the BFCL back-end), a
task summary and one chain skill per tool used. Per tool: an interface record, a tool
summary and a prompt skill. One neural skill routes user turns to tools. Influence:

    interface record -> call records -> caches -> task summary -> tool summary -> prompt skill
    user turns ------------------------------------^ (and -> neural skill)
    interface record, call records -> chain skill

The mapping from BFCL fields is documented in ``docs/evaluation.md``. Values and repair
costs are left ``None`` so the engine's per-kind/arch settings decide. Output is
deterministic: the same ``n_tasks`` gives the same bytes.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.bfcl.backends import (
    BfclBackend,
    ToolCallError,
    check_call,
    interface_from_docs,
)
from bench.bfcl.classes import make_backend
from bench.bfcl.data import (
    DEFAULT_CATEGORY,
    TOOL_DOCS,
    Task,
    Turn,
    load_tasks,
    select_tasks,
)
from bench.bfcl.executors import (
    SETUP_PRIOR_CALLS,
    build_cache_content,
    rewrite_call_record,
)
from bench.bfcl.graph import depth, influence_children
from memorepair.codec import canonical_json
from memorepair.model import Arch, ArtifactIn, EdgeIn, Kind, Recipe
from memorepair.operators.base import Support
from memorepair.operators.neural import train_neural_skill
from memorepair.operators.regen import distill_prompt, summarize

DEFAULT_TASKS = 48
#: The version an imported artifact gets (summaries cite their support as uid@vN).
IMPORT_VERSION = 1
#: How many task summaries a prompt skill distils besides its tool summary.
PROMPT_TASKS = 3
NEURAL_UID = "bfcl/skill/neural/tool-router"
#: Executor names the builder writes into recipes (the harness registers both).
CALL_EXECUTOR = "bfcl.call"
REWRITE_EXECUTOR = "bfcl.rewrite_call"

NeuralHook = Callable[[Sequence[Support]], str]


def iface_uid(tool: str) -> str:
    return f"bfcl/tool/{tool}/interface"


def tool_summary_uid(tool: str) -> str:
    return f"bfcl/tool/{tool}/summary"


def prompt_uid(tool: str) -> str:
    return f"bfcl/tool/{tool}/prompt"


def turn_uid(task: str, turn: int) -> str:
    return f"bfcl/{task}/turn/{turn}"


def call_uid(task: str, turn: int, j: int) -> str:
    return f"bfcl/{task}/call/{turn}.{j}"


def cache_uid(task: str, turn: int, j: int) -> str:
    return f"bfcl/{task}/cache/{turn}.{j}"


def summary_uid(task: str) -> str:
    return f"bfcl/{task}/summary"


def chain_uid(task: str, tool: str) -> str:
    return f"bfcl/{task}/chain/{tool}"


def as_support(artifact: ArtifactIn, version: int = IMPORT_VERSION) -> Support:
    return Support(
        uid=artifact.uid,
        version=version,
        kind=artifact.kind,
        arch=artifact.arch,
        content=artifact.content,
        meta=artifact.meta,
        origin="retained",
    )


def turn_label(turns: Sequence[Turn], k: int) -> str | None:
    """The tool turn ``k``'s request is for (the router's training label), if any.

    The tool most called in the turn; a request answered only after the tool set changed
    (the next turn has calls but no user message: ``multi_turn_miss_func``) takes the next
    turn's. A turn without a user message gets none: it has no text to learn from.
    """
    turn = turns[k]
    if not turn.text.strip():
        return None
    calls = turn.calls
    if not calls and k + 1 < len(turns) and not turns[k + 1].text.strip():
        calls = turns[k + 1].calls
    labels = Counter(c.tool for c in calls)
    return max(sorted(labels), key=lambda t: labels[t]) if labels else None


def silent_turn_text(turn: Turn) -> str:
    """The record of a turn with no user message (BFCL adds a function there)."""
    if turn.added:
        return (
            f"(No user message: {', '.join(turn.added)} added to the tool set; "
            "the calls of this turn answer the previous request.)"
        )
    return "(No user message in this turn.)"


def summary_content(support: Sequence[Support]) -> str:
    """The regen operator's own format (``- <first sentence> [uid@vN]`` per item)."""
    return summarize(support)


@dataclass(frozen=True)
class Memory:
    tasks: tuple[Task, ...]
    artifacts: tuple[ArtifactIn, ...]
    edges: tuple[EdgeIn, ...]
    build_seconds: float = field(default=0.0, compare=False)

    def items(self) -> list[ArtifactIn | EdgeIn]:
        return [*self.artifacts, *self.edges]

    def by_uid(self) -> dict[str, ArtifactIn]:
        return {a.uid: a for a in self.artifacts}

    def tools(self) -> list[str]:
        return sorted({str(a.meta["tool"]) for a in self.artifacts if "interface" in a.meta})


def make_backends(tasks: Sequence[Task]) -> dict[str, BfclBackend]:
    """One adapter per tool, with every task's initial config registered as a scenario.

    Each is an instance of the tool's zero-argument class (``classes.backend_class``), so
    the chain sandbox can rebuild it in its child process.
    """
    backends: dict[str, BfclBackend] = {}
    for task in tasks:
        for tool in task.tools:
            backend = backends.setdefault(tool, make_backend(tool))
            backend.add_scenario(task.id, task.initial_config.get(tool, {}))
    return dict(sorted(backends.items()))


class _Builder:
    def __init__(self, backends: Mapping[str, BfclBackend]):
        self.backends = backends
        self.artifacts: dict[str, ArtifactIn] = {}
        self.edges: list[EdgeIn] = []
        self.task_summaries: dict[str, list[str]] = {}

    def add(self, artifact: ArtifactIn) -> ArtifactIn:
        assert artifact.uid not in self.artifacts, artifact.uid
        self.artifacts[artifact.uid] = artifact
        return artifact

    def support(self, uids: Sequence[str]) -> list[Support]:
        return [as_support(self.artifacts[u]) for u in uids]

    def interface(self, tool: str) -> None:
        data = self.backends[tool].schema().model_dump(mode="json")
        self.add(
            ArtifactIn(
                uid=iface_uid(tool),
                kind=Kind.RECORD,
                content=canonical_json(data),
                meta={"tool": tool, "interface": data, "source": "bfcl func doc"},
            )
        )

    def task(self, task: Task) -> None:
        summary_inputs: list[str] = []
        tool_calls: dict[str, list[str]] = {}
        for k, turn in enumerate(task.turns):
            meta: dict[str, Any] = {"task": task.id, "turn": turn.index, "role": "user"}
            label = turn_label(task.turns, k)
            if label is not None:
                meta["label"] = label
            t_uid = self.add(
                ArtifactIn(
                    uid=turn_uid(task.id, turn.index),
                    kind=Kind.RECORD,
                    content=turn.text or silent_turn_text(turn),
                    meta=meta,
                )
            ).uid
            summary_inputs.append(t_uid)
            for j, call in enumerate(turn.calls):
                recipe_args = {"tool": call.tool, **call.as_json()}
                c_uid = call_uid(task.id, turn.index, j)
                self.add(
                    ArtifactIn(
                        uid=c_uid,
                        kind=Kind.RECORD,
                        content=rewrite_call_record([], recipe_args, None),
                        recipe=Recipe(executor=REWRITE_EXECUTOR, args=recipe_args),
                        meta={
                            "task": task.id,
                            "turn": turn.index,
                            "tool": call.tool,
                            "call": call.as_json(),
                            "label": call.tool,
                        },
                        inputs=[iface_uid(call.tool)],
                    )
                )
                self.edges.append(EdgeIn(src=t_uid, dst=c_uid, rel="RELATED"))
                prior = tool_calls.setdefault(call.tool, [])
                inputs = [c_uid, iface_uid(call.tool), *prior]
                prior.append(c_uid)
                args = {
                    "backend": call.tool,
                    "function": "$input:0.function",
                    "args": "$input:0.args",
                    "scenario": task.id,
                    "setup": SETUP_PRIOR_CALLS,
                    "prior_from": 2,
                }
                output = build_cache_content(self.support(inputs), args, None, self.backends)
                summary_inputs.append(
                    self.add(
                        ArtifactIn(
                            uid=cache_uid(task.id, turn.index, j),
                            kind=Kind.CACHE,
                            content=output,
                            recipe=Recipe(executor=CALL_EXECUTOR, args=args),
                            meta={"task": task.id, "turn": turn.index, "tool": call.tool},
                            inputs=inputs,
                        )
                    ).uid
                )
        s_uid = summary_uid(task.id)
        self.add(
            ArtifactIn(
                uid=s_uid,
                kind=Kind.SUMMARY,
                content=summary_content(self.support(summary_inputs)),
                meta={"task": task.id, "tools": sorted(tool_calls)},
                inputs=summary_inputs,
            )
        )
        for tool, calls in sorted(tool_calls.items()):
            self.task_summaries.setdefault(tool, []).append(s_uid)
            steps = [self.artifacts[c].meta["call"] for c in calls]
            ch_uid = chain_uid(task.id, tool)
            self.add(
                ArtifactIn(
                    uid=ch_uid,
                    kind=Kind.SKILL,
                    arch=Arch.CHAIN,
                    content=canonical_json({"tool": tool, "steps": steps}),
                    meta={"task": task.id, "tool": tool},
                    inputs=[iface_uid(tool), *calls],
                )
            )
            self.edges.append(EdgeIn(src=s_uid, dst=ch_uid, rel="RELATED"))

    def tool_level(self, tool: str) -> None:
        summaries = self.task_summaries.get(tool, [])
        if not summaries:
            return
        self.add(
            ArtifactIn(
                uid=tool_summary_uid(tool),
                kind=Kind.SUMMARY,
                content=summary_content(self.support(summaries)),
                meta={"tool": tool, "tasks": len(summaries)},
                inputs=summaries,
            )
        )
        inputs = [tool_summary_uid(tool), *summaries[:PROMPT_TASKS]]
        title = f"How to use {tool}, from past tasks"
        self.add(
            ArtifactIn(
                uid=prompt_uid(tool),
                kind=Kind.SKILL,
                arch=Arch.PROMPT,
                content=distill_prompt(self.support(inputs), title),
                meta={"tool": tool, "title": title},
                inputs=inputs,
            )
        )
        self.edges.append(EdgeIn(src=tool_summary_uid(tool), dst=iface_uid(tool), rel="RELATED"))

    def neural(self, hook: NeuralHook) -> None:
        labelled = sorted(
            u
            for u, a in self.artifacts.items()
            if a.meta.get("role") == "user" and "label" in a.meta
        )
        self.add(
            ArtifactIn(
                uid=NEURAL_UID,
                kind=Kind.SKILL,
                arch=Arch.NEURAL,
                content=hook(self.support(labelled)),
                meta={"labels": sorted({str(self.artifacts[u].meta["label"]) for u in labelled})},
                inputs=labelled,
            )
        )


def conforming(tasks: Sequence[Task]) -> list[Task]:
    """Tasks whose every ground-truth call matches the documented interface.

    BFCL has a few data quirks (``close_ticket(ticket_id='ticket_001')`` for an integer
    parameter); such a task could not be replayed under our checked interfaces, so it
    is left out before selection.
    """
    schemas = {tool: interface_from_docs(tool) for tool in TOOL_DOCS}
    out = []
    for task in tasks:
        try:
            for _, _, call in task.calls():
                check_call(schemas[call.tool], call.function, call.args)
        except ToolCallError:
            continue
        out.append(task)
    return out


def build_memory(
    n_tasks: int = DEFAULT_TASKS,
    *,
    category: str = DEFAULT_CATEGORY,
    content_for_neural: NeuralHook = train_neural_skill,
) -> Memory:
    """The memory for ``n_tasks`` tasks spread over ``category`` (deterministic)."""
    start = time.perf_counter()
    tasks = select_tasks(conforming(load_tasks(category)), n_tasks)
    b = _Builder(make_backends(tasks))
    for tool in sorted(b.backends):
        b.interface(tool)
    for task in tasks:
        b.task(task)
    for tool in sorted(b.backends):
        b.tool_level(tool)
    b.neural(content_for_neural)
    return Memory(
        tasks=tuple(tasks),
        artifacts=tuple(b.artifacts.values()),
        edges=tuple(b.edges),
        build_seconds=time.perf_counter() - start,
    )


def dump_jsonl(memory: Memory) -> str:
    """The memory as JSON Lines: ``{"type": "artifact", ...}`` then ``{"type": "edge", ...}``."""
    lines = [
        json.dumps(
            {"type": "artifact", **a.model_dump(mode="json", exclude_none=True)},
            sort_keys=True,
            ensure_ascii=False,
        )
        for a in memory.artifacts
    ]
    lines += [
        json.dumps({"type": "edge", **e.model_dump(mode="json")}, sort_keys=True)
        for e in memory.edges
    ]
    return "\n".join(lines) + "\n"


def write_jsonl(memory: Memory, path: Path) -> None:
    path.write_text(dump_jsonl(memory), encoding="utf-8")


def memory_stats(memory: Memory) -> dict[str, Any]:
    """Counts per kind/arch, edges, depth, build time: the figures for the report."""
    kinds = Counter(
        f"{a.kind.value}/{a.arch.value}" if a.arch else a.kind.value for a in memory.artifacts
    )
    children = influence_children(memory.artifacts, memory.edges)
    return {
        "tasks": len(memory.tasks),
        "tools": len(memory.tools()),
        "artifacts": len(memory.artifacts),
        "per_kind": dict(sorted(kinds.items())),
        "influence_edges": sum(len(v) for v in children.values()),
        "related_edges": sum(1 for e in memory.edges if e.rel == "RELATED"),
        "depth": depth(children),
        "build_seconds": round(memory.build_seconds, 3),
        "known_tools": len(TOOL_DOCS),
    }
