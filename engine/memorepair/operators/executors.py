"""Built-in replay executors for ``recompute``: pure functions of support and arguments.

Recipe arguments (``Recipe.args``) per executor:

- ``text.join``: ``{"sep": str = "\\n"}``; joins the support contents in input order.
- ``json.pick``: ``{"path": "a.b.0" | ["a", "b", 0]}``; parses the first support item as
  JSON and returns the canonical JSON of the value at ``path``.
- ``embed.hash``: ``{"dim": int = 64}``; signed hashed bag of words of the support text
  joined by newlines, L2-normalised, rounded to 6 decimals, as a JSON list.
- ``tool.call``: ``{"backend": str, "function": str, "args": {...}}``; a string argument
  ``"$input:N"`` or ``"$input:N.key.path"`` is replaced by support item N's content
  (parsed as JSON when it is JSON, then followed along the key path). Output is the
  canonical JSON of the call's result. The back-end runs in the sandbox (``sandbox.py``:
  its own namespaces, limits and a wall-clock timeout), rebuilt there from its class's
  import path, so it must be a module-level class with a zero-argument constructor.

``positional`` executors address their inputs by index: if one recorded input is gone
(deleted), a replay would read the wrong item, so ``recompute`` refuses to build.
"""

from __future__ import annotations

import math
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from memorepair.codec import canonical_json
from memorepair.model import Interface

from .base import Executor, Support, ToolBackend
from .common import OperatorError, hashed_counts, parse_json, pick
from .sandbox import import_root, run_job

#: Wall clock and address space for one ``tool.call`` in the sandbox (the chain defaults).
TOOL_CALL_TIMEOUT_S = 5.0
TOOL_CALL_MEMORY_MB = 1024

INPUT_REF = re.compile(r"^\$input:(?P<index>\d+)(?:\.(?P<path>.+))?$")

BackendLookup = Callable[[str, Interface | None, Sequence[str]], ToolBackend | None]


class TextJoin:
    positional = False

    def __call__(
        self, support: Sequence[Support], args: Mapping[str, Any], interface: Interface | None
    ) -> str:
        sep = args.get("sep", "\n")
        if not isinstance(sep, str):
            raise OperatorError(f"text.join: 'sep' must be a string, got {sep!r}")
        return sep.join(s.content for s in support)


class JsonPick:
    positional = True

    def __call__(
        self, support: Sequence[Support], args: Mapping[str, Any], interface: Interface | None
    ) -> str:
        if not support:
            raise OperatorError("json.pick: no support item to read")
        ok, value = parse_json(support[0].content)
        if not ok:
            raise OperatorError(f"json.pick: input {support[0].uid!r} is not JSON")
        try:
            return canonical_json(pick(value, args.get("path")))
        except OperatorError as exc:
            raise OperatorError(f"json.pick on {support[0].uid!r}: {exc}") from exc


def embed_text(text: str, dim: int) -> list[float]:
    """The cached embedding of a text: hashed bag of words, unit length, 6 decimals."""
    vec = hashed_counts(text, dim)
    norm = math.sqrt(sum(v * v for v in vec))
    if norm == 0.0:
        return [0.0] * dim
    return [round(v / norm, 6) + 0.0 for v in vec]  # + 0.0 turns -0.0 into 0.0


class EmbedHash:
    positional = False

    def __call__(
        self, support: Sequence[Support], args: Mapping[str, Any], interface: Interface | None
    ) -> str:
        dim = args.get("dim", 64)
        if not isinstance(dim, int) or isinstance(dim, bool) or not 1 <= dim <= 65536:
            raise OperatorError(f"embed.hash: 'dim' must be an integer in [1, 65536], got {dim!r}")
        return canonical_json(embed_text("\n".join(s.content for s in support), dim))


def resolve_input_refs(value: Any, support: Sequence[Support]) -> Any:
    """Replace ``"$input:N[.path]"`` strings (at any depth) by support item N's content."""
    if isinstance(value, str):
        match = INPUT_REF.match(value)
        if match is None:
            return value
        index = int(match["index"])
        if index >= len(support):
            raise OperatorError(f"{value!r}: only {len(support)} support item(s) are available")
        is_json, content = parse_json(support[index].content)
        if match["path"] is None:
            return content
        if not is_json:
            raise OperatorError(f"{value!r}: input {support[index].uid!r} is not JSON")
        return pick(content, match["path"])
    if isinstance(value, list):
        return [resolve_input_refs(v, support) for v in value]
    if isinstance(value, dict):
        return {k: resolve_input_refs(v, support) for k, v in value.items()}
    return value


class ToolCall:
    """Calls a registered tool back-end; the back-end is found per call, by interface."""

    positional = True

    def __init__(
        self,
        backends: BackendLookup,
        *,
        timeout_s: float = TOOL_CALL_TIMEOUT_S,
        memory_mb: int = TOOL_CALL_MEMORY_MB,
    ) -> None:
        self._backends = backends
        self.timeout_s = timeout_s
        self.memory_mb = memory_mb

    def __call__(
        self, support: Sequence[Support], args: Mapping[str, Any], interface: Interface | None
    ) -> str:
        name, function, call_args = args.get("backend"), args.get("function"), args.get("args", {})
        if not isinstance(name, str) or not isinstance(function, str):
            raise OperatorError("tool.call: 'backend' and 'function' must be strings")
        if not isinstance(call_args, dict):
            raise OperatorError("tool.call: 'args' must be an object")
        tool_interface = interface if interface is not None and interface.tool == name else None
        backend = self._backends(name, tool_interface, (function,))
        if backend is None:
            raise OperatorError(f"tool.call: no back-end {name!r} implements {function!r}")
        job = {
            "kind": "call",
            "backend": rebuildable(backend, name),
            "function": function,
            "args": resolve_input_refs(call_args, support),
        }
        root = import_root(job["backend"]["module"])
        verdict = run_job(
            job,
            timeout_s=self.timeout_s,
            memory_mb=self.memory_mb,
            extra_path=[root] if root else [],
        )
        if not verdict.get("ok"):
            raise OperatorError(f"tool.call: {name}.{function} failed: {verdict.get('reason')}")
        return canonical_json(verdict.get("result"))


def rebuildable(backend: ToolBackend, name: str) -> dict[str, str]:
    """Where the sandbox finds the back-end's class; refuses one it could not rebuild."""
    cls = type(backend)
    module = sys.modules.get(cls.__module__)
    if cls.__module__ == "__main__" or getattr(module, cls.__qualname__, None) is not cls:
        raise OperatorError(
            f"tool.call: back-end {name!r} ({cls.__module__}.{cls.__qualname__}) cannot be "
            "rebuilt in the sandbox; register an instance of a module-level class whose "
            "constructor takes no arguments"
        )
    return {"module": cls.__module__, "attr": cls.__qualname__}


def builtin_executors(
    backends: BackendLookup,
    *,
    timeout_s: float = TOOL_CALL_TIMEOUT_S,
    memory_mb: int = TOOL_CALL_MEMORY_MB,
) -> dict[str, Executor]:
    """The built-in executors; ``tool.call`` runs in the sandbox with these limits."""
    return {
        "text.join": TextJoin(),
        "json.pick": JsonPick(),
        "embed.hash": EmbedHash(),
        "tool.call": ToolCall(backends, timeout_s=timeout_s, memory_mb=memory_mb),
    }
