"""``ToolBackend`` adapters over the real BFCL back-end classes, and migrated variants.

A back-end instance is created lazily per ``state`` (one instance per chain or replay):
the class is instantiated and, as BFCL does, ``_load_scenario(deepcopy(initial_config))``
is called with the configuration of the scenario named by ``state["scenario"]`` (a task
id registered with the adapter; no scenario means BFCL's default state). Calls are
checked against the interface first (unknown function or parameter, missing required
parameter, wrong type: ``ToolCallError``), then the real method is called by name.
BFCL reports domain errors as ``{"error": ...}`` results, which are returned as they are.

A *migrated* back-end (``MigratedBackend``) serves a changed interface: a renamed function
and/or parameter, optionally a changed parameter type. Calls by the old names fail; calls
by the new names are translated to the real method. Everything is deterministic (the BFCL
classes seed their own ``random.Random``).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from bench.bfcl.data import STATELESS_TOOLS, func_docs, tool_class
from memorepair.errors import InputError, MemoRepairError
from memorepair.model import FunctionSpec, Interface, ParamType

#: BFCL func-doc types -> our ParamType.
BFCL_TYPES: dict[str, ParamType] = {
    "string": "string",
    "float": "number",
    "number": "number",
    "integer": "integer",
    "boolean": "boolean",
    "array": "array",
    "dict": "object",
    "object": "object",
}


class ToolCallError(MemoRepairError):
    """A call that the back-end's current interface does not accept (name, params, types)."""


def interface_from_docs(tool: str) -> Interface:
    """The tool's interface from its BFCL func docs (parameters in documented order)."""
    functions: dict[str, FunctionSpec] = {}
    for doc in func_docs(tool):
        props: dict[str, Any] = doc["parameters"].get("properties", {})
        params: dict[str, ParamType] = {}
        for name, prop in props.items():
            kind = BFCL_TYPES.get(str(prop.get("type")))
            if kind is None:
                raise InputError(f"{tool}.{doc['name']}: unsupported type {prop.get('type')!r}")
            params[name] = kind
        required = [str(p) for p in doc["parameters"].get("required", [])]
        functions[str(doc["name"])] = FunctionSpec(params=params, required=required)
    return Interface(tool=tool, functions=functions)


def type_matches(value: Any, kind: ParamType) -> bool:
    if kind == "string":
        return isinstance(value, str)
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    if kind == "array":
        return isinstance(value, list | tuple)
    return isinstance(value, dict)


def check_call(interface: Interface, function: str, args: Mapping[str, Any]) -> FunctionSpec:
    """The function's spec if the call conforms to the interface, else ``ToolCallError``."""
    spec = interface.functions.get(function)
    if spec is None:
        raise ToolCallError(f"{interface.tool} has no function {function!r}")
    unknown = sorted(set(args) - set(spec.params))
    missing = [p for p in spec.required if p not in args]
    if unknown or missing:
        raise ToolCallError(
            f"{interface.tool}.{function}: unknown parameters {unknown}, missing {missing}"
        )
    for name, value in args.items():
        if not type_matches(value, spec.params[name]):
            raise ToolCallError(
                f"{interface.tool}.{function}: parameter {name!r} must be "
                f"{spec.params[name]}, got {type(value).__name__}"
            )
    return spec


def render_output(result: Any) -> str:
    """A call's result as cache content: strings as they are, anything else canonical JSON."""
    if isinstance(result, str):
        return result
    return json.dumps(result, sort_keys=True, ensure_ascii=False, default=str)


class BfclBackend:
    """One BFCL class as a ``ToolBackend``; ``scenarios`` maps task id -> that task's config.

    The chain sandbox rebuilds a back-end in a child process from its class's import path
    with no arguments: use the per-tool subclasses of ``bench.bfcl.classes``
    (``make_backends`` does), which know their tool and, without scenarios, serve BFCL's
    default state.
    """

    #: Set by the per-tool subclasses, which may then be built with no arguments.
    tool: str = ""

    def __init__(
        self, tool: str | None = None, scenarios: Mapping[str, Mapping[str, Any]] | None = None
    ):
        tool = tool or type(self).tool
        if not tool:
            raise InputError("BfclBackend needs a tool name (or use a per-tool subclass)")
        self.name = tool
        self._cls = tool_class(tool)
        self._interface = interface_from_docs(tool)
        self._scenarios = dict(scenarios or {})

    def schema(self) -> Interface:
        return self._interface

    def add_scenario(self, scenario: str, config: Mapping[str, Any]) -> None:
        self._scenarios[scenario] = config

    def instance(self, state: dict[str, Any]) -> Any:
        """The BFCL object behind ``state`` (created and loaded on first use)."""
        inst = state.get("instance")
        if inst is None:
            inst = self._cls()
            if self.name not in STATELESS_TOOLS:
                scenario = state.get("scenario")
                if scenario is not None and scenario not in self._scenarios:
                    raise InputError(f"{self.name}: unknown scenario {scenario!r}")
                config = self._scenarios.get(scenario, {}) if scenario is not None else {}
                inst._load_scenario(copy.deepcopy(dict(config)))
            state["instance"] = inst
        return inst

    def call(self, function: str, args: Mapping[str, Any], state: dict[str, Any]) -> Any:
        check_call(self._interface, function, args)
        return self.invoke(function, args, state)

    def invoke(self, function: str, args: Mapping[str, Any], state: dict[str, Any]) -> Any:
        """Call the real method without the interface check (the migrated wrapper checks)."""
        method = getattr(self.instance(state), function)
        return method(**copy.deepcopy(dict(args)))


_RETYPES: frozenset[tuple[str, str]] = frozenset(
    {
        ("integer", "string"),
        ("number", "string"),
        ("boolean", "string"),
        ("integer", "number"),
        ("array", "string"),
    }
)


@dataclass(frozen=True)
class Migration:
    """One interface change of one function: rename it and/or one parameter, or retype it.

    ``param`` and ``new_type`` use the old parameter name; ``new_type`` is the type the
    (possibly renamed) parameter has after the migration.
    """

    tool: str
    function: str
    new_function: str | None = None
    param: str | None = None
    new_param: str | None = None
    new_type: ParamType | None = None

    def describe(self) -> str:
        parts = []
        if self.new_function:
            parts.append(f"rename {self.function} -> {self.new_function}")
        if self.new_param:
            parts.append(f"rename {self.function}.{self.param} -> {self.new_param}")
        if self.new_type:
            parts.append(f"retype {self.function}.{self.param} -> {self.new_type}")
        return f"{self.tool}: " + ", ".join(parts)


def migrate_interface(interface: Interface, m: Migration) -> Interface:
    """The interface after ``m``: new schema plus ``renames``/``param_renames`` maps."""
    spec = interface.functions.get(m.function)
    if spec is None:
        raise InputError(f"{interface.tool} has no function {m.function!r} to migrate")
    if (m.new_param or m.new_type) and (m.param is None or m.param not in spec.params):
        raise InputError(f"{interface.tool}.{m.function} has no parameter {m.param!r}")
    if not (m.new_function or m.new_param or m.new_type):
        raise InputError(f"migration of {interface.tool}.{m.function} changes nothing")
    params = dict(spec.params)
    required = list(spec.required)
    if m.param is not None and m.new_type is not None:
        if (params[m.param], m.new_type) not in _RETYPES:
            raise InputError(f"unsupported retype {params[m.param]} -> {m.new_type}")
        params[m.param] = m.new_type
    if m.param is not None and m.new_param is not None:
        if m.new_param in params:
            raise InputError(f"{interface.tool}.{m.function} already has {m.new_param!r}")
        params = {m.new_param if k == m.param else k: v for k, v in params.items()}
        required = [m.new_param if p == m.param else p for p in required]
    new_name = m.new_function or m.function
    if new_name != m.function and new_name in interface.functions:
        raise InputError(f"{interface.tool} already has a function {new_name!r}")
    functions = {
        (new_name if k == m.function else k): (
            FunctionSpec(params=params, required=required) if k == m.function else v
        )
        for k, v in interface.functions.items()
    }
    renames = dict(interface.renames)
    if new_name != m.function:
        renames[m.function] = new_name
    param_renames = {k: dict(v) for k, v in interface.param_renames.items()}
    if m.param is not None and m.new_param is not None:
        param_renames.setdefault(m.function, {})[m.param] = m.new_param
    retypes = {k: dict(v) for k, v in interface.retypes.items()}
    if m.param is not None and m.new_type is not None:
        retypes.setdefault(m.function, {})[m.param] = spec.params[m.param]
    return Interface(
        tool=interface.tool,
        functions=functions,
        renames=renames,
        param_renames=param_renames,
        retypes=retypes,
    )


def _coerce_back(value: Any, original: ParamType) -> Any:
    """A value of the migrated type converted to the real method's original type."""
    if isinstance(value, str) and original != "string":
        try:
            value = json.loads(value)
        except ValueError as e:
            raise ToolCallError(f"value {value!r} cannot be read as {original}") from e
    if original == "integer" and isinstance(value, float) and value.is_integer():
        value = int(value)
    if not type_matches(value, original):
        raise ToolCallError(f"value {value!r} cannot be read as {original}")
    return value


class MigratedBackend:
    """A back-end serving ``migrate_interface(inner.schema(), migration)``.

    ``bench.bfcl.classes.migrated_class`` gives a zero-argument subclass per
    migration (for the chain sandbox).
    """

    def __init__(self, inner: BfclBackend, migration: Migration):
        if migration.tool != inner.name:
            raise InputError(f"migration for {migration.tool!r} applied to {inner.name!r}")
        self.name = inner.name
        self.inner = inner
        self.migration = migration
        self._old = inner.schema()
        self._interface = migrate_interface(self._old, migration)

    def schema(self) -> Interface:
        return self._interface

    def call(self, function: str, args: Mapping[str, Any], state: dict[str, Any]) -> Any:
        check_call(self._interface, function, args)
        m = self.migration
        old_function = m.function if function == (m.new_function or m.function) else function
        if old_function != m.function:
            return self.inner.invoke(function, args, state)
        new_param = m.new_param or m.param
        real: dict[str, Any] = {}
        for name, value in args.items():
            if name == new_param and m.param is not None:
                if m.new_type is not None:
                    value = _coerce_back(value, self._old.functions[m.function].params[m.param])
                real[m.param] = value
            else:
                real[name] = value
        return self.inner.invoke(old_function, real, state)


def convert_value(value: Any, kind: ParamType) -> Any:
    """An argument value written for ``kind`` after a retype (inverse of ``_coerce_back``)."""
    if kind == "string" and not isinstance(value, str):
        return json.dumps(value, sort_keys=True)
    if kind == "number" and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    return value


def rewrite_call(
    interface: Interface, function: str, args: Mapping[str, Any]
) -> tuple[str, dict[str, Any]]:
    """A call written against the old interface, rewritten with ``interface``'s maps.

    Values are converted when the target parameter's type changed (e.g. integer -> string).
    """
    renames = interface.param_renames.get(function, {})
    new_function = interface.renames.get(function, function)
    spec = interface.functions.get(new_function)
    new_args: dict[str, Any] = {}
    for name, value in args.items():
        new_name = renames.get(name, name)
        kind = spec.params.get(new_name) if spec is not None else None
        new_args[new_name] = convert_value(value, kind) if kind else value
    return new_function, new_args
