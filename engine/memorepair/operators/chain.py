"""``regen`` for chain skills: executable tool procedures, validated by running them.

Content is canonical JSON ``{"steps": [{"args": {...}, "function": str}], "tool": str}``.
A tool-call record (the support a chain is distilled from) carries
``meta = {"tool": str, "call": {"function": str, "args": {...}}}``.

build: under ``migrate`` for the chain's tool, the old steps are rewritten through the
interface's rename maps, with the values of retyped parameters converted to their new
type (``common.migrate_call``); otherwise the procedure is rebuilt from the support's
tool-call records in support order (deleted records are simply not there).
validate: every step must be derived from usable support (a step that only an invalidated
record explains fails), then the chain runs in the sandbox (a fresh process of the
event's sandbox worker) against the current interface and, when one is registered, the
tool's back-end.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from memorepair.codec import canonical_json
from memorepair.errors import some
from memorepair.model import Arch, Artifact, EventType, Interface, Kind, Mode
from memorepair.settings import OperatorConfig

from .base import RepairContext, Successor, Support, Tools, Validation
from .common import (
    NoSupport,
    OperatorError,
    migrate_call,
    parse_json,
    schema_dict,
    unknown_inputs,
)
from .sandbox import import_root, run_chain

Step = dict[str, Any]


def recorded_call(meta: Any, tool: str) -> Step | None:
    """The ``{"function", "args"}`` call a record's meta carries for ``tool``, if any."""
    if not hasattr(meta, "get") or meta.get("tool") != tool:
        return None
    call = meta.get("call")
    if not isinstance(call, dict) or not isinstance(call.get("function"), str):
        return None
    args = call.get("args", {})
    if not isinstance(args, dict):
        return None
    return {"function": call["function"], "args": dict(args)}


def chain_json(tool: str, steps: Iterable[Step]) -> str:
    return canonical_json({"tool": tool, "steps": list(steps)})


def chain_from_calls(support: Sequence[Support], tool: str) -> str:
    """The chain distilled from the tool-call records among ``support``, in order."""
    return chain_json(tool, (c for s in support if (c := recorded_call(s.meta, tool))))


def parse_chain(text: str) -> tuple[str, list[Step]]:
    ok, value = parse_json(text)
    if not ok or not isinstance(value, dict) or not isinstance(value.get("tool"), str):
        raise OperatorError("chain skill content is not JSON {'tool': str, 'steps': [...]}")
    steps = value.get("steps")
    if not isinstance(steps, list) or not all(
        isinstance(s, dict)
        and isinstance(s.get("function"), str)
        and isinstance(s.get("args", {}), dict)
        for s in steps
    ):
        raise OperatorError("chain skill steps must be [{'function': str, 'args': {...}}]")
    return value["tool"], [{"function": s["function"], "args": s.get("args", {})} for s in steps]


def migrate_steps(steps: Iterable[Step], interface: Interface) -> list[Step]:
    out = []
    for step in steps:
        function, args = migrate_call(interface, step["function"], step["args"])
        out.append({"function": function, "args": args})
    return out


def chain_tool(artifact: Artifact) -> str:
    """The chain's tool: from its current content, else ``meta["tool"]``."""
    try:
        return parse_chain(artifact.content)[0]
    except OperatorError:
        tool = artifact.meta.get("tool")
        if isinstance(tool, str):
            return tool
        raise OperatorError(f"{artifact.uid}: cannot tell which tool the chain is for") from None


def _migrating(ctx: RepairContext, tool: str) -> Interface | None:
    interface = ctx.interface
    if ctx.event_type is EventType.MIGRATE and interface is not None and interface.tool == tool:
        return interface
    return None


class ChainOperator:
    name = "chain"
    mode = Mode.REGEN

    def __init__(self, tools: Tools, config: OperatorConfig | None = None) -> None:
        self._tools = tools
        self._config = config or OperatorConfig()

    def accepts(self, artifact: Artifact) -> bool:
        return artifact.kind is Kind.SKILL and artifact.arch is Arch.CHAIN

    def build(self, ctx: RepairContext) -> Successor:
        tool = chain_tool(ctx.artifact)
        interface = _migrating(ctx, tool)
        if interface is not None:
            _, steps = parse_chain(ctx.artifact.content)
            content = chain_json(tool, migrate_steps(steps, interface))
            return Successor(content=content, inputs=tuple(s.uid for s in ctx.support))
        used = tuple(s.uid for s in ctx.support if recorded_call(s.meta, tool))
        if not used:
            raise NoSupport(f"{ctx.artifact.uid}: no retained tool-call records for {tool!r}")
        return Successor(content=chain_from_calls(ctx.support, tool), inputs=used)

    def _allowed_steps(self, ctx: RepairContext, tool: str) -> tuple[set[str], dict[str, str]]:
        """Canonical steps usable support explains, and steps only invalidated records explain."""
        interface = _migrating(ctx, tool)

        def canon(steps: list[Step]) -> list[str]:
            # Both the recorded and the migrated form count as derived from the record: a
            # stale (unmigrated) step is then rejected by the interface check, by name.
            forms = steps + (migrate_steps(steps, interface) if interface is not None else [])
            return [canonical_json(s) for s in forms]

        allowed = set(canon([c for s in ctx.support if (c := recorded_call(s.meta, tool))]))
        if interface is not None:
            allowed |= set(canon(parse_chain(ctx.artifact.content)[1]))
        tainted: dict[str, str] = {}
        for art in ctx.invalidated:
            call = recorded_call(art.meta, tool)
            if call is not None:
                for key in canon([call]):
                    tainted.setdefault(key, art.uid)
        return allowed, tainted

    def _schema(self, ctx: RepairContext, tool: str, steps: list[Step]) -> tuple[Any, Any]:
        """The interface to check against and the back-end to run on (either may be None)."""
        interface = _migrating(ctx, tool)
        functions = [s["function"] for s in steps]
        backend = self._tools.backend(tool, interface, () if interface else functions)
        if interface is None and backend is not None:
            interface = backend.schema()
        return interface, backend

    def validate(self, ctx: RepairContext, successor: Successor) -> Validation:
        try:
            tool, steps = parse_chain(successor.content)
            expected_tool = chain_tool(ctx.artifact)
        except OperatorError as exc:
            return Validation(False, f"schema: {exc}")
        if tool != expected_tool:
            return Validation(False, f"schema: chain is for {tool!r}, expected {expected_tool!r}")
        if not steps:
            return Validation(False, "schema: chain has no steps")
        stray = unknown_inputs(ctx, successor.inputs)
        if stray:
            return Validation(False, f"support: {some(stray, 'input')} not usable support")
        allowed, tainted = self._allowed_steps(ctx, tool)
        for i, step in enumerate(steps):
            key = canonical_json(step)
            if key in allowed:
                continue
            if key in tainted:
                return Validation(
                    False, f"support: step {i} comes from invalidated record {tainted[key]!r}"
                )
            return Validation(
                False, f"support: step {i} ({step['function']}) is not in the support"
            )
        interface, backend = self._schema(ctx, tool, steps)
        if interface is None:
            if self._config.chain_allow_unchecked:
                return Validation(True)
            return Validation(False, f"sandbox: no interface or back-end for tool {tool!r}")
        job = {
            "chain": {"tool": tool, "steps": steps},
            "schema": schema_dict(interface),
            "backend": None,
            "max_steps": self._config.chain_max_steps,
        }
        extra_path: list[str] = []
        if backend is not None:
            cls = type(backend)
            job["backend"] = {"module": cls.__module__, "attr": cls.__qualname__}
            root = import_root(cls.__module__)
            extra_path = [root] if root else []
        verdict = run_chain(
            job,
            timeout_s=self._config.chain_timeout_s,
            memory_mb=self._config.chain_memory_mb,
            extra_path=extra_path,
        )
        if not verdict.get("ok"):
            return Validation(False, f"sandbox: {verdict.get('reason', 'failed')}")
        return Validation(True)
