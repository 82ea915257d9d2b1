"""The contract's nouns as validated data: artifacts, edges, repair events, interfaces.

Everything that crosses the boundary (an import line, an event file, a Python API call)
is parsed into these models first, so that bad input fails before anything is written.
Field names are the ones used in the JSON Lines interchange, in Neo4j and in the docs.
"""

from __future__ import annotations

import math
from collections import Counter
from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    field_validator,
    model_validator,
)

from memorepair.errors import some

#: Identifiers end up in Neo4j properties and CLI output, never in query text; the pattern
#: still keeps them printable and unambiguous (no spaces, no quotes, no backticks).
UID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._:@/\-]{0,199}$"
NS_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._\-]{0,63}$"
#: Largest repair cost c: with lambda <= 1e9, lambda * c stays within the 1e15 the exact
#: selector accepts, so a valid event can never fail selection after its barrier.
MAX_COST = 1e6

Uid = Annotated[str, Field(pattern=UID_PATTERN)]
Namespace = Annotated[str, Field(pattern=NS_PATTERN)]


def finite_json(value: Any) -> Any:
    """`value` if no number in it is NaN or infinite (neither is JSON; both break replay)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, float) and not math.isfinite(item):
            raise ValueError(f"{item!r} is not a finite number (NaN and Infinity are not JSON)")
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list | tuple):
            stack.extend(item)
    return value


JsonValue = Annotated[Any, AfterValidator(finite_json)]


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
    args: dict[str, JsonValue] = Field(default_factory=dict)


class ArtifactIn(Strict):
    """An artifact as written by an agent or an import line (always a fresh version)."""

    uid: Uid
    kind: Kind
    arch: Arch | None = None
    content: str
    value: float | None = None
    repair_cost: float | None = None
    recipe: Recipe | None = None
    meta: dict[str, JsonValue] = Field(default_factory=dict)
    inputs: list[Uid] = Field(default_factory=list)
    related: list[Uid] = Field(default_factory=list)

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
        return self


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


def version_id(ns: str, uid: str, version: int) -> str:
    """The unique key of one version of one artifact (a uniqueness constraint in Neo4j)."""
    return f"{ns}/{uid}@{version}"


def artifact_key(ns: str, uid: str) -> str:
    """The key shared by all versions of one artifact (unique among Live nodes)."""
    return f"{ns}/{uid}"


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
    `param_renames` maps, per old function name, old parameter names to new ones. Chain
    skills and replay recipes are rewritten with these maps and checked against the schema.
    """

    tool: Annotated[str, Field(pattern=r"^[A-Za-z][A-Za-z0-9_.\-]{0,63}$")]
    functions: dict[str, FunctionSpec]
    renames: dict[str, str] = Field(default_factory=dict)
    param_renames: dict[str, dict[str, str]] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _renames_target_schema(self) -> Interface:
        missing = [new for new in self.renames.values() if new not in self.functions]
        if missing:
            raise ValueError(
                f"renames point at functions missing from the schema: {some(missing, 'function')}"
            )
        return self


class Replacement(Strict):
    """A fresh artifact X_delta that takes a corrected root's place (same uid, next version)."""

    replaces: Uid
    content: str
    meta: dict[str, JsonValue] | None = None
    recipe: Recipe | None = None


class RepairEventSpec(Strict):
    """A repair event e = (F, tau, Delta) as given in an event file or through the API."""

    id: Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._:\-]{0,127}$")]
    type: EventType
    roots: list[Uid] = Field(min_length=1)
    ns: Namespace = "default"
    lam: float | None = Field(default=None, alias="lambda")
    reason: str = ""
    replacements: list[Replacement] = Field(default_factory=list)
    interface: Interface | None = None

    @field_validator("lam")
    @classmethod
    def _check_lambda(cls, v: float | None) -> float | None:
        if v is not None and (not math.isfinite(v) or v < 0 or v > 1e9):
            raise ValueError(f"lambda must be a finite number in [0, 1e9], got {v!r}")
        return v

    @model_validator(mode="after")
    def _check_delta(self) -> RepairEventSpec:
        if len(set(self.roots)) != len(self.roots):
            raise ValueError("roots lists a uid twice")
        if self.type is EventType.CORRECT:
            replaced = [r.replaces for r in self.replacements]
            if sorted(replaced) != sorted(self.roots):
                raise ValueError(
                    "a 'correct' event needs exactly one replacement per root "
                    f"({_replacement_mismatch(self.roots, replaced)})"
                )
        elif self.replacements:
            raise ValueError(
                f"replacements are only allowed for 'correct', not {self.type.value!r}"
            )
        if self.type is EventType.MIGRATE and self.interface is None:
            raise ValueError("a 'migrate' event needs an 'interface' (the tool's new schema)")
        if self.type is not EventType.MIGRATE and self.interface is not None:
            raise ValueError(f"interface is only allowed for 'migrate', not {self.type.value!r}")
        return self


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
