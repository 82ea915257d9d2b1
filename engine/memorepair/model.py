"""The contract's nouns as validated data: artifacts, edges, repair events, interfaces.

Everything that crosses the boundary (an import line, an event file, a Python API call)
is parsed into these models first, so that bad input fails before anything is written.
Field names are the ones used in the JSON Lines interchange, in Neo4j and in the docs.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Callable
from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    field_validator,
    model_serializer,
    model_validator,
)

from memorepair.errors import some

#: Identifiers end up in Neo4j properties and CLI output, never in query text; the pattern
#: still keeps them printable and unambiguous (no spaces, no quotes, no backticks).
UID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._:@/\-]{0,199}$"
NS_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._\-]{0,63}$"
#: Principal names (access.py): JWT subjects and API-key names alike, printable without
#: spaces (`|` and `:` appear in common issuers' subjects).
PRINCIPAL_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._@:+|=/\-]{0,127}$"
#: Largest repair cost c: with lambda <= MAX_LAMBDA, lambda * c stays within the 1e15 the
#: exact selector accepts, so a valid event can never fail selection after its barrier.
MAX_COST = 1e6
MAX_LAMBDA = 1e9  # written "1e9" in messages (lambda_problem)


def lambda_problem(value: float) -> str | None:
    """Why `value` is not a usable cost weight lambda (None when it is).

    The one definition of lambda's bounds: event files, `--lambda`, the API and
    `MEMOREPAIR_LAMBDA` all check through it, each raising its own kind of error.
    """
    if isinstance(value, bool) or not math.isfinite(value) or not 0 <= value <= MAX_LAMBDA:
        return f"lambda must be a finite number in [0, 1e9], got {value!r}"
    return None


#: Progress of a long step: (step, done, total), called as work completes.
Progress = Callable[[str, int, int], None]

#: An input a writer pins to the version it read: `uid@N` (see `ArtifactIn`).
PIN = re.compile(r"^(?P<uid>.+)@(?P<version>[1-9][0-9]{0,9})$")


def _unpinned(uid: str) -> str:
    """A uid may not end in `@<digits>`: that form names a version (`uid@3`)."""
    if PIN.match(uid):
        raise ValueError(f"uid {uid!r} ends in '@<number>', which names a version; rename it")
    return uid


def text_problem(value: Any, where: str = "") -> str | None:
    """Why a JSON value cannot be stored (None when it can): a lone surrogate, which is
    not Unicode text and cannot be encoded, or NaN/Infinity, which are not JSON numbers."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:
            return (
                f"{where or 'text'} holds a lone surrogate ({value[exc.start]!r}) at position "
                f"{exc.start}: not valid Unicode text"
            )
    elif isinstance(value, float) and not math.isfinite(value):
        return f"{where or 'value'} is {value!r}, which is not a JSON number"
    elif isinstance(value, dict):
        for key, item in value.items():
            problem = text_problem(key, where) or text_problem(item, f"{where}.{key}".lstrip("."))
            if problem:
                return problem
    elif isinstance(value, list):
        for index, item in enumerate(value):
            problem = text_problem(item, f"{where}[{index}]")
            if problem:
                return problem
    return None


def _storable(value: Any) -> Any:
    problem = text_problem(value)
    if problem:
        raise ValueError(problem)
    return value


Uid = Annotated[str, Field(pattern=UID_PATTERN), AfterValidator(_unpinned)]
Text = Annotated[str, AfterValidator(_storable)]
#: A JSON object as artifacts and events carry it (meta, recipe arguments).
JsonObject = Annotated[dict[str, Any], AfterValidator(_storable)]
#: A number the caller gives as a number: "5" and true are refused, 5 becomes 5.0.
Number = Annotated[float, Field(strict=True)]
Namespace = Annotated[str, Field(pattern=NS_PATTERN)]


JsonValue = Any


class Kind(StrEnum):
    RECORD = "record"
    CACHE = "cache"
    SUMMARY = "summary"
    SKILL = "skill"


class Arch(StrEnum):
    NEURAL = "neural"
    PROMPT = "prompt"
    CHAIN = "chain"


class Mode(StrEnum):
    RECOMPUTE = "recompute"
    REGEN = "regen"
    PARAM = "param"
    REMOVE = "remove"


class EventType(StrEnum):
    DELETE = "delete"
    CORRECT = "correct"
    MIGRATE = "migrate"


class Visibility(StrEnum):
    """Visibility labels in Neo4j; only LIVE is ever served."""

    LIVE = "Live"
    WITHDRAWN = "Withdrawn"
    STAGED = "Staged"
    SUPERSEDED = "Superseded"
    REMOVED = "Removed"


def _finite_non_negative(name: str, value: float | None) -> float | None:
    if value is None:
        return None
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")
    return value


class Strict(BaseModel):
    model_config = ConfigDict(
        extra="forbid", frozen=True, populate_by_name=True, allow_inf_nan=False
    )


class Recipe(Strict):
    """How to replay a deterministic artifact: an executor plugin name and its arguments.

    Inputs are passed to the executor in the order of the artifact's `inputs` list, so a
    replay under a correction sees the replacement where the root used to be.
    """

    executor: Annotated[str, Field(pattern=r"^[a-z][a-z0-9_.\-]{0,63}$")]
    args: JsonObject = Field(default_factory=dict)


def _split_pins(data: Any) -> Any:
    """`inputs` as written (`uid` or `uid@N`) -> plain uids plus `pinned` {uid: N}."""
    if not isinstance(data, dict) or not isinstance(data.get("inputs"), list):
        return data
    inputs: list[Any] = []
    pinned = dict(data.get("pinned") or {})
    for item in data["inputs"]:
        match = PIN.match(item) if isinstance(item, str) else None
        if match:
            pinned[match["uid"]] = int(match["version"])
            inputs.append(match["uid"])
        else:
            inputs.append(item)
    return {**data, "inputs": inputs, "pinned": pinned}


class ArtifactIn(Strict):
    """An artifact as written by an agent or an import line (always a fresh version).

    An input is `uid` (the version served when it is recorded) or `uid@N`, the version
    the writer actually read: parsed into `inputs` (uids) and `pinned` ({uid: N}). A
    pinned input that is no longer the served version makes the artifact stale.
    """

    uid: Uid
    kind: Kind
    arch: Arch | None = None
    content: Text
    value: Number | None = None
    repair_cost: Number | None = None
    recipe: Recipe | None = None
    meta: JsonObject = Field(default_factory=dict)
    inputs: list[Uid] = Field(default_factory=list)
    pinned: dict[Uid, int] = Field(default_factory=dict)
    related: list[Uid] = Field(default_factory=list)

    _pins = model_validator(mode="before")(_split_pins)

    @field_validator("value", "repair_cost")
    @classmethod
    def _check_number(cls, v: float | None, info: Any) -> float | None:
        checked = _finite_non_negative(info.field_name, v)
        if info.field_name == "repair_cost" and checked is not None and checked > MAX_COST:
            raise ValueError(f"repair_cost must be at most {MAX_COST:g}, got {checked!r}")
        return checked

    @model_validator(mode="after")
    def _check_arch(self) -> ArtifactIn:
        if self.kind is Kind.SKILL and self.arch is None:
            raise ValueError("arch is required for kind 'skill' (one of neural, prompt, chain)")
        if self.kind is not Kind.SKILL and self.arch is not None:
            raise ValueError(f"arch is only allowed for kind 'skill', not {self.kind.value!r}")
        if self.uid in self.inputs:
            raise ValueError(f"artifact {self.uid!r} lists itself as an input")
        if len(set(self.inputs)) != len(self.inputs):
            raise ValueError(f"artifact {self.uid!r} lists an input twice")
        stray = sorted(set(self.pinned) - set(self.inputs))
        if stray:
            raise ValueError(f"pinned {some(stray, 'uid')} are not among the inputs")
        return self

    def input_refs(self) -> list[str]:
        """The inputs as written: `uid@N` where pinned, else `uid`."""
        return [f"{u}@{self.pinned[u]}" if u in self.pinned else u for u in self.inputs]


class Artifact(Strict):
    """One stored version of an artifact, as read back from Neo4j."""

    uid: str
    version: int
    ns: str
    kind: Kind
    arch: Arch | None = None
    content: str
    value: float | None = None
    repair_cost: float | None = None
    recipe: Recipe | None = None
    meta: dict[str, JsonValue] = Field(default_factory=dict)
    visibility: Visibility
    #: uids of this version's influence predecessors, in recorded order.
    inputs: list[str] = Field(default_factory=list)

    @property
    def vid(self) -> str:
        return version_id(self.ns, self.uid, self.version)

    @property
    def pin(self) -> str:
        """`uid@version`: what a writer cites as an input to say which version it read."""
        return pin(self.uid, self.version)


def version_id(ns: str, uid: str, version: int) -> str:
    """The unique key of one version of one artifact (a uniqueness constraint in Neo4j)."""
    return f"{ns}/{pin(uid, version)}"


def pin(uid: str, version: int) -> str:
    """`uid@version`, the pinned form of an input (`PIN` parses it back)."""
    return f"{uid}@{version}"


def artifact_key(ns: str, uid: str) -> str:
    """The key shared by all versions of one artifact (unique among Live nodes)."""
    return f"{ns}/{uid}"


def event_key(ns: str, event_id: str) -> str:
    """The key of a repair event (unique per namespace: constraint `event_key`)."""
    return f"{ns}/{event_id}"


#: Stripes of a namespace's publication lock: a repair writes at most this many batches
#: at once, each under its own stripe; a barrier takes them all (MEMOREPAIR_REPAIR_WRITERS).
PUBLISH_STRIPES = 2


def publish_lock_keys(ns: str) -> list[str]:
    """The keys of a namespace's publication lock stripes (constraint `publish_lock_key`);
    `#` cannot occur in a namespace, so no two namespaces share one."""
    return [f"{ns}#{n}" for n in range(PUBLISH_STRIPES)]


class EdgeIn(Strict):
    """A standalone edge line: INFLUENCES decides repair scope, RELATED only retrieval."""

    src: Uid
    dst: Uid
    rel: Literal["INFLUENCES", "RELATED"] = "INFLUENCES"

    @model_validator(mode="after")
    def _no_self_loop(self) -> EdgeIn:
        if self.src == self.dst:
            raise ValueError(f"edge {self.src!r} -> {self.dst!r} is a self-loop")
        return self


ParamType = Literal["string", "integer", "number", "boolean", "array", "object"]


class FunctionSpec(Strict):
    params: dict[str, ParamType] = Field(default_factory=dict)
    required: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _required_known(self) -> FunctionSpec:
        unknown = [p for p in self.required if p not in self.params]
        if unknown:
            raise ValueError(f"{some(unknown, 'required parameter')} not declared in params")
        return self


class Interface(Strict):
    """The post-event interface kappa_e of a tool after a migration.

    `functions` is the new schema; `renames` maps old function names to new ones and
    `param_renames` maps, per old function name, old parameter names to new ones.
    `retypes` names, per old function and parameter name, the type its values had before
    a migration that changed it: a recorded value of that old type is converted to the
    parameter's new type (2 -> "2" when an integer became a string). Chain skills and
    replay recipes are rewritten with these maps and checked against the schema.
    """

    tool: Annotated[str, Field(pattern=r"^[A-Za-z][A-Za-z0-9_.\-]{0,63}$")]
    functions: dict[str, FunctionSpec]
    renames: dict[str, str] = Field(default_factory=dict)
    param_renames: dict[str, dict[str, str]] = Field(default_factory=dict)
    retypes: dict[str, dict[str, ParamType]] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _renames_target_schema(self) -> Interface:
        missing = [new for new in self.renames.values() if new not in self.functions]
        if missing:
            raise ValueError(
                f"renames point at functions missing from the schema: {some(missing, 'function')}"
            )
        stray = [
            f"{function}.{param}"
            for function, params in self.retypes.items()
            for param in params
            if self.new_param(function, param) is None
        ]
        if stray:
            raise ValueError(
                f"retypes name parameters missing from the schema: {some(stray, 'parameter')}"
            )
        return self

    @model_serializer(mode="wrap")
    def _without_empty_retypes(self, handler: SerializerFunctionWrapHandler) -> Any:
        # An interface without retypes serialises as before they existed, so the digest
        # of an event recorded by an earlier version is unchanged.
        data = handler(self)
        if isinstance(data, dict) and not self.retypes:
            data.pop("retypes", None)
        return data

    def new_param(self, function: str, param: str) -> tuple[str, str, ParamType] | None:
        """An old function's parameter after the migration: (function, parameter, type)
        in the new schema, or None when the schema has no such parameter."""
        new_function = self.renames.get(function, function)
        new_name = self.param_renames.get(function, {}).get(param, param)
        spec = self.functions.get(new_function)
        declared = spec.params.get(new_name) if spec is not None else None
        return (new_function, new_name, declared) if declared is not None else None


class Replacement(Strict):
    """A fresh artifact X_delta that takes a corrected root's place (same uid, next version).

    It keeps the root's inputs (influence edges from their served versions) unless it
    declares its own `inputs` (`uid` or `uid@N`, as for a recorded artifact).
    """

    replaces: Uid
    content: Text
    meta: JsonObject | None = None
    recipe: Recipe | None = None
    inputs: list[Uid] | None = None
    pinned: dict[Uid, int] = Field(default_factory=dict)

    _pins = model_validator(mode="before")(_split_pins)

    @model_validator(mode="after")
    def _check_inputs(self) -> Replacement:
        if self.inputs is not None and self.replaces in self.inputs:
            raise ValueError(f"the replacement of {self.replaces!r} lists itself as an input")
        if self.inputs is not None and len(set(self.inputs)) != len(self.inputs):
            raise ValueError(f"the replacement of {self.replaces!r} lists an input twice")
        stray = sorted(set(self.pinned) - set(self.inputs or ()))
        if stray:
            raise ValueError(f"pinned {some(stray, 'uid')} are not among the inputs")
        return self


class RepairEventSpec(Strict):
    """A repair event e = (F, tau, Delta) as given in an event file or through the API."""

    id: Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._:\-]{0,127}$")]
    type: EventType
    roots: list[Uid] = Field(min_length=1)
    ns: Namespace = "default"
    lam: Number | None = Field(default=None, alias="lambda")
    reason: Text = ""
    replacements: list[Replacement] = Field(default_factory=list)
    interface: Interface | None = None
    #: `correct` only: also erase the corrected (old) text, as a `delete` always does.
    erase: bool = False
    #: A follow-up event re-attempting what this earlier event left failed or blocked.
    retry_of: Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._:\-]{0,127}$")] | None = None

    @field_validator("lam")
    @classmethod
    def _check_lambda(cls, v: float | None) -> float | None:
        problem = None if v is None else lambda_problem(v)
        if problem:
            raise ValueError(problem)
        return v

    def delta(self, uid: str) -> tuple[str, dict[str, JsonValue], Recipe | None]:
        """What root `uid` becomes (content, meta, recipe): its replacement X_delta for a
        `correct` event, the new interface kappa_e for a `migrate` one."""
        if self.type is EventType.CORRECT:
            replacement = next(r for r in self.replacements if r.replaces == uid)
            return replacement.content, dict(replacement.meta or {}), replacement.recipe
        if self.interface is None:
            raise ValueError(f"a {self.type.value!r} event does not replace its roots")
        interface = self.interface.model_dump()
        meta = {"tool": self.interface.tool, "interface": interface}
        return json.dumps(interface, sort_keys=True), meta, None

    @model_validator(mode="after")
    def _check_delta(self) -> RepairEventSpec:
        if len(set(self.roots)) != len(self.roots):
            raise ValueError("roots lists a uid twice")
        if self.type is EventType.CORRECT and self.retry_of is None:
            replaced = [r.replaces for r in self.replacements]
            if sorted(replaced) != sorted(self.roots):
                raise ValueError(
                    "a 'correct' event needs exactly one replacement per root "
                    f"({_replacement_mismatch(self.roots, replaced)})"
                )
        elif self.replacements and self.type is not EventType.CORRECT:
            raise ValueError(
                f"replacements are only allowed for 'correct', not {self.type.value!r}"
            )
        if self.type is EventType.MIGRATE and self.interface is None:
            raise ValueError("a 'migrate' event needs an 'interface' (the tool's new schema)")
        if self.type is not EventType.MIGRATE and self.interface is not None:
            raise ValueError(f"interface is only allowed for 'migrate', not {self.type.value!r}")
        if self.erase and self.type is not EventType.CORRECT:
            raise ValueError(
                "erase is for 'correct' events (a 'delete' always erases; a 'migrate' has no "
                "text to erase)"
            )
        return self

    @property
    def erases(self) -> bool:
        """Whether completing this event erases its roots' old text everywhere."""
        return self.type is EventType.DELETE or self.erase


def _replacement_mismatch(roots: list[str], replaced: list[str]) -> str:
    """Which roots lack a replacement, which replacements match no root, which repeat."""
    unmatched = sorted(set(roots) - set(replaced))
    stray = sorted(set(replaced) - set(roots))
    twice = sorted(uid for uid, n in Counter(replaced).items() if n > 1)
    parts = []
    if unmatched:
        parts.append(f"no replacement for {some(unmatched, 'root')}")
    if stray:
        parts.append(f"{some(stray, 'replacement')} for no root")
    if twice:
        parts.append(f"{some(twice, 'root')} replaced more than once")
    return "; ".join(parts)
