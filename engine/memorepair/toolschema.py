"""A tool's schema as MemoRepair's interface, and what changed between two versions of it.

Agents hold tool schemas in the forms their frameworks use: MCP's `tools/list` entries
(`name`, `inputSchema`), OpenAI function definitions (`{"type": "function", "function":
{"name", "parameters"}}`), bare JSON Schemas per function, or MemoRepair's own
`functions` map. A migration event needs the new schema plus the maps that rewrite old
calls (`renames`, `param_renames`, `retypes`, see `model.Interface`); when a tool changes, the agent
has the old and the new schema in hand, so those maps are inferred here where the change
leaves no doubt, and left for the caller to give where it does. Pure functions: no store.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from typing import Any, cast

from pydantic import ValidationError

from memorepair.errors import InputError, describe_validation
from memorepair.model import FunctionSpec, Interface, ParamType

_TYPES: frozenset[str] = frozenset(("string", "integer", "number", "boolean", "array", "object"))
#: Two names whose similarity ratio is below this are never paired on their names alone.
NAME_MATCH = 0.5
#: A removed and an added function are paired only when their score reaches this.
FUNCTION_MATCH = 0.4


@dataclass(frozen=True)
class Migration:
    """The new interface kappa_e, and how its maps were obtained (for the caller to check)."""

    interface: Interface
    inferred: dict[str, Any] = field(default_factory=dict)
    unmapped: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "interface": self.interface.model_dump(mode="json"),
            "inferred": self.inferred,
            "unmapped": self.unmapped,
        }


def functions_of(schema: Any, where: str = "schema") -> dict[str, FunctionSpec]:
    """The functions of a tool schema in any of the accepted forms (see the module doc)."""
    if isinstance(schema, Mapping) and "functions" in schema:
        return functions_of(schema["functions"], where)
    if isinstance(schema, Mapping) and ("name" in schema or "function" in schema):
        schema = [schema]
    if isinstance(schema, Sequence) and not isinstance(schema, str):
        entries = [_named(entry, where) for entry in schema]
        return {name: _function(body, f"{where}: function {name!r}") for name, body in entries}
    if isinstance(schema, Mapping):
        return {str(n): _function(b, f"{where}: function {n!r}") for n, b in schema.items()}
    raise InputError(
        f"{where}: expected a list of function schemas or a map of function name to schema, "
        f"got {type(schema).__name__}"
    )


def _named(entry: Any, where: str) -> tuple[str, Any]:
    if isinstance(entry, Mapping) and isinstance(entry.get("function"), Mapping):
        entry = entry["function"]  # OpenAI: {"type": "function", "function": {...}}
    if not isinstance(entry, Mapping) or not isinstance(entry.get("name"), str):
        raise InputError(f"{where}: each function schema needs a string 'name'")
    for key in ("inputSchema", "input_schema", "parameters"):
        if key in entry:
            return entry["name"], entry[key]
    return entry["name"], {"type": "object", "properties": {}}


def _function(body: Any, where: str) -> FunctionSpec:
    """One function's parameters from JSON Schema (`properties`) or MemoRepair's `params`."""
    if not isinstance(body, Mapping):
        raise InputError(f"{where}: expected an object, got {type(body).__name__}")
    if "params" in body:
        data: Mapping[str, Any] = body
    else:
        properties = body.get("properties") or {}
        if not isinstance(properties, Mapping):
            raise InputError(f"{where}: 'properties' must be an object")
        params = {
            str(p): _param_type(s, f"{where}, parameter {p!r}") for p, s in properties.items()
        }
        data = {"params": params, "required": list(body.get("required") or [])}
    try:
        return FunctionSpec.model_validate(dict(data))
    except ValidationError as exc:
        raise InputError(f"{where}: {describe_validation(exc)}") from exc


def _param_type(schema: Any, where: str) -> ParamType:
    """A JSON Schema's type as one of the interface's six (nullable types drop the null)."""
    if not isinstance(schema, Mapping):
        raise InputError(f"{where}: expected a JSON Schema object")
    declared = schema.get("type")
    options = declared if isinstance(declared, list) else [declared]
    for alternative in schema.get("anyOf") or schema.get("oneOf") or []:
        if isinstance(alternative, Mapping):
            options.append(alternative.get("type"))
    for option in options:
        if option in _TYPES:
            return cast(ParamType, option)
    if "enum" in schema and all(isinstance(v, str) for v in schema["enum"]):
        return "string"
    raise InputError(
        f"{where}: no type MemoRepair can check (one of {sorted(_TYPES)}); give the type"
    )


def migration(
    tool: str,
    old: Any,
    new: Any,
    *,
    renames: Mapping[str, str] | None = None,
    param_renames: Mapping[str, Mapping[str, str]] | None = None,
) -> Migration:
    """The interface after `tool` changed from `old` to `new`: given maps win, the rest is
    inferred where it is unambiguous, and what stays unmapped is listed."""
    before = functions_of(old, "old schema") if old is not None else {}
    after = functions_of(new, "new schema")
    inferred: dict[str, Any] = {"renames": {}, "param_renames": {}}
    names = dict(renames or {})
    if renames is None:
        names = infer_renames(before, after)
        inferred["renames"] = dict(names)
    params = {f: dict(m) for f, m in (param_renames or {}).items()}
    unmapped: list[str] = []
    for old_name, spec in before.items():
        new_name = names.get(old_name, old_name)
        if new_name not in after:
            unmapped.append(f"function {old_name!r} is gone from the new schema")
            continue
        if old_name not in params:
            found = infer_params(spec, after[new_name])
            if found:
                params[old_name] = found
                inferred["param_renames"][old_name] = dict(found)
        unmapped += _dropped(old_name, spec, after[new_name], params.get(old_name, {}))
    retypes = _retypes(before, after, names, params)
    try:
        interface = Interface(
            tool=tool, functions=after, renames=names, param_renames=params, retypes=retypes
        )
    except ValidationError as exc:
        raise InputError(f"migration of tool {tool!r}: {describe_validation(exc)}") from exc
    return Migration(interface, inferred, unmapped)


def _retypes(
    before: Mapping[str, FunctionSpec],
    after: Mapping[str, FunctionSpec],
    names: Mapping[str, str],
    params: Mapping[str, Mapping[str, str]],
) -> dict[str, dict[str, ParamType]]:
    """Per old function and parameter, the old type of each parameter whose type the new
    schema changed: read off the two schemas (no guess), so recorded values are converted
    (`Interface.retypes`)."""
    out: dict[str, dict[str, ParamType]] = {}
    for old_name, spec in before.items():
        new = after.get(names.get(old_name, old_name))
        mapped = params.get(old_name, {})
        for param, kind in spec.params.items():
            new_kind = new.params.get(mapped.get(param, param)) if new is not None else None
            if new_kind is not None and new_kind != kind:
                out.setdefault(old_name, {})[param] = kind
    return out


def _dropped(
    name: str, old: FunctionSpec, new: FunctionSpec, mapped: Mapping[str, str]
) -> list[str]:
    return [
        f"parameter {p!r} of {name!r} has no counterpart in the new schema"
        for p in old.params
        if p not in new.params and p not in mapped
    ]


def infer_renames(
    old: Mapping[str, FunctionSpec], new: Mapping[str, FunctionSpec]
) -> dict[str, str]:
    """Old function -> new function, for functions that left and arrived together: a pair
    counts when each is the other's best match (names and parameters) and good enough."""
    gone = [f for f in old if f not in new]
    added = [f for f in new if f not in old]
    if len(gone) == 1 and len(added) == 1:
        return {gone[0]: added[0]}
    scores = {(g, a): _function_score(g, old[g], a, new[a]) for g in gone for a in added}
    return _mutual_best(gone, added, scores, FUNCTION_MATCH)


def _function_score(old_name: str, old: FunctionSpec, new_name: str, new: FunctionSpec) -> float:
    name = SequenceMatcher(None, old_name, new_name).ratio()
    types_old = sorted(old.params.values())
    types_new = sorted(new.params.values())
    common = sum(min(types_old.count(t), types_new.count(t)) for t in set(types_old))
    shape = common / max(len(types_old), len(types_new)) if (types_old or types_new) else 1.0
    return (name + shape) / 2


def infer_params(old: FunctionSpec, new: FunctionSpec) -> dict[str, str]:
    """Old parameter -> new parameter among those that left and arrived, per type: equal
    counts of one type pair in declared order; otherwise only clear name matches."""
    gone = [p for p in old.params if p not in new.params]
    added = [p for p in new.params if p not in old.params]
    found: dict[str, str] = {}
    for kind in {old.params[p] for p in gone}:
        left = [p for p in gone if old.params[p] == kind]
        arrived = [p for p in added if new.params[p] == kind]
        found.update(_pair_params(left, arrived))
    return {p: found[p] for p in gone if p in found}


def _pair_params(left: Sequence[str], arrived: Sequence[str]) -> dict[str, str]:
    """Parameters of one type that left and arrived: in declared order when the counts
    are equal, else only the clear name matches."""
    if len(left) == len(arrived):
        return dict(zip(left, arrived, strict=True))
    scores = {(g, a): SequenceMatcher(None, g, a).ratio() for g in left for a in arrived}
    return _mutual_best(left, arrived, scores, NAME_MATCH)


def _mutual_best(
    left: Sequence[str], right: Sequence[str], scores: Mapping[tuple[str, str], float], floor: float
) -> dict[str, str]:
    """Pairs (l, r) where r is l's unique best, l is r's unique best, and the score >= floor."""
    pairs: dict[str, str] = {}
    for item in left:
        best = _unique_best([(scores[(item, other)], other) for other in right])
        if best is None or scores[(item, best)] < floor:
            continue
        back = _unique_best([(scores[(other, best)], other) for other in left])
        if back == item:
            pairs[item] = best
    return pairs


def _unique_best(scored: Sequence[tuple[float, str]]) -> str | None:
    ranked = sorted(scored, reverse=True)
    if not ranked or (len(ranked) > 1 and ranked[0][0] == ranked[1][0]):
        return None
    return ranked[0][1]
