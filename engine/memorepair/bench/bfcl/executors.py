"""Replay of the benchmark's recipes: the contract the built memory is consistent with.

Two recipes occur in the BFCL memory.

``tool.call`` (caches), the built-in executor's format with two bench keys::

    {"backend": T, "function": f, "args": {p: "$input:0.args.p", ...},
     "scenario": task_id, "setup": "prior_calls"}

``$input:N.a.b`` is support N's content read as JSON, then the dotted path (a literal
value stays as it is). A cache's support is ``[its call record, the interface record,
the same tool's earlier call records of the task...]``; ``setup: "prior_calls"`` replays
those earlier calls first, in support order, on one fresh state whose ``scenario`` is the
task, so the output is the one BFCL produces at that point of the task. A deleted earlier
call is absent from the support and is not replayed; a corrected one is replayed as
corrected. Under a migration every call is first rewritten with the new interface.

``bfcl.rewrite_call`` (tool-call records, which list the interface record as input):
``{"tool": T, "function": f, "args": {...}}`` -> the call as canonical JSON, rewritten
with the interface when a migration of ``T`` supplies one. It keeps a call record
recomputable when its tool's interface changes, instead of removed.

``build_cache_content`` and ``rewrite_call_record`` are the reference implementations;
the builder computes every cache and call record with them, so the stored content equals
the replay by construction.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from memorepair.bench.bfcl.backends import render_output, rewrite_call
from memorepair.errors import InputError
from memorepair.model import Interface
from memorepair.operators.base import Support, ToolBackend

PLACEHOLDER = "$input:"
SETUP_PRIOR_CALLS = "prior_calls"


def canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def resolve(value: Any, support: Sequence[Support]) -> Any:
    """A recipe argument with ``$input:N[.path]`` placeholders replaced from the support."""
    if isinstance(value, dict):
        return {k: resolve(v, support) for k, v in value.items()}
    if isinstance(value, list):
        return [resolve(v, support) for v in value]
    if not isinstance(value, str) or not value.startswith(PLACEHOLDER):
        return value
    ref, _, path = value[len(PLACEHOLDER) :].partition(".")
    index = int(ref)
    if index >= len(support):
        raise InputError(f"placeholder {value!r}: only {len(support)} support items")
    item = support[index]
    if not path:
        return item.content
    current: Any = json.loads(item.content)
    for key in path.split("."):
        if not isinstance(current, dict) or key not in current:
            raise InputError(f"placeholder {value!r}: {item.uid} has no {key!r}")
        current = current[key]
    return current


def _under(
    interface: Interface | None, tool: str, call: Mapping[str, Any]
) -> tuple[str, dict[str, Any]]:
    function, args = str(call["function"]), dict(call["args"])
    if interface is not None and interface.tool == tool:
        return rewrite_call(interface, function, args)
    return function, args


def rewrite_call_record(
    support: Sequence[Support], args: Mapping[str, Any], interface: Interface | None
) -> str:
    """Executor ``bfcl.rewrite_call``: the recorded call under the current interface."""
    function, call_args = _under(interface, str(args["tool"]), args)
    return canonical_json({"function": function, "args": call_args})


def build_cache_content(
    support: Sequence[Support],
    args: Mapping[str, Any],
    interface: Interface | None,
    backends: Mapping[str, ToolBackend],
) -> str:
    """Reference replay of a ``tool.call`` recipe with the bench's scenario and setup keys."""
    name = str(args["backend"])
    backend = backends.get(name)
    if backend is None:
        raise InputError(f"no back-end registered under {name!r}")
    state: dict[str, Any] = {}
    if args.get("scenario") is not None:
        state["scenario"] = args["scenario"]
    if args.get("setup") == SETUP_PRIOR_CALLS:
        for item in support[1:]:
            if item.meta.get("tool") == name and "call" in item.meta:
                function, call_args = _under(interface, name, json.loads(item.content))
                backend.call(function, call_args, state)
    call = {"function": args["function"], "args": resolve(args.get("args", {}), support)}
    function, call_args = _under(interface, name, call)
    return render_output(backend.call(function, call_args, state))
