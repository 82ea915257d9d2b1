"""The benchmark's replay executors, registered by the harness under their own names.

``bfcl.call`` (caches)::

    {"backend": T, "function": "$input:0.function", "args": "$input:0.args",
     "scenario": task_id, "setup": "prior_calls", "prior_from": 2}

``$input:N.a.b`` is support N's content read as JSON, then the dotted path (a literal
value stays as it is), so the call comes from the cache's own call record (support 0).
A cache's support is ``[its call record, the interface record, the same tool's earlier
call records of the task...]``; ``setup: "prior_calls"`` replays support items from
``prior_from`` on first, in support order, on one fresh back-end state whose scenario is
the task, so the output is the one BFCL produces at that point of the task. Under a
migration every call is rewritten with the new interface (idempotent: a call record that
was itself recomputed under the migration is already in the new form), and the back-end
is the one the registry serves for that interface. Prior calls are found by position,
not by meta, because a recomputed record's successor carries no meta. The executor is
``positional``: the engine never replays it with an input missing (a deleted record
makes the cache's mode ``remove``).

``bfcl.rewrite_call`` (tool-call records, which list the interface record as input):
``{"tool": T, "function": f, "args": {...}}`` -> the call as canonical JSON, rewritten
with the interface when a migration of ``T`` supplies one. It keeps a call record
recomputable when its tool's interface changes, instead of removed.

The builder computes every cache and call record with these same executors, so the stored
content equals the replay by construction.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from bench.bfcl.backends import render_output, rewrite_call
from memorepair.codec import canonical_json
from memorepair.errors import InputError
from memorepair.model import Interface
from memorepair.operators.base import Support, ToolBackend

PLACEHOLDER = "$input:"
SETUP_PRIOR_CALLS = "prior_calls"


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


BackendLookup = Callable[[str, Interface | None, Sequence[str]], ToolBackend | None]


def lookup_in(backends: Mapping[str, ToolBackend]) -> BackendLookup:
    """A registry-style back-end lookup over a plain dict (builder and event generation)."""

    def find(
        name: str, interface: Interface | None, functions: Sequence[str]
    ) -> ToolBackend | None:
        return backends.get(name)

    return find


def _call_of(content: str) -> dict[str, Any]:
    call = json.loads(content)
    if not isinstance(call, dict) or not isinstance(call.get("function"), str):
        raise InputError(f"not a recorded call: {content[:80]!r}")
    return {"function": call["function"], "args": dict(call.get("args") or {})}


class BfclCall:
    """Executor ``bfcl.call``: replays one BFCL call on its task's scenario (see above)."""

    positional = True

    def __init__(self, backends: BackendLookup) -> None:
        self._backends = backends

    def __call__(
        self, support: Sequence[Support], args: Mapping[str, Any], interface: Interface | None
    ) -> str:
        name = str(args["backend"])
        tool_interface = interface if interface is not None and interface.tool == name else None
        call = {
            "function": resolve(args.get("function"), support),
            "args": resolve(args.get("args", {}), support),
        }
        if not isinstance(call["function"], str) or not isinstance(call["args"], dict):
            raise InputError(f"bfcl.call: {args!r} does not give a function name and arguments")
        function, call_args = _under(tool_interface, name, call)
        backend = self._backends(name, tool_interface, (function,))
        if backend is None:
            raise InputError(f"bfcl.call: no back-end {name!r} implements {function!r}")
        state: dict[str, Any] = {}
        if args.get("scenario") is not None:
            state["scenario"] = args["scenario"]
        if args.get("setup") == SETUP_PRIOR_CALLS:
            for item in support[int(args.get("prior_from", 2)) :]:
                backend.call(*_under(tool_interface, name, _call_of(item.content)), state)
        return render_output(backend.call(function, call_args, state))


def build_cache_content(
    support: Sequence[Support],
    args: Mapping[str, Any],
    interface: Interface | None,
    backends: Mapping[str, ToolBackend],
) -> str:
    """``bfcl.call`` over a plain dict of back-ends (the builder's reference replay)."""
    return BfclCall(lookup_in(backends))(support, args, interface)
