"""The plugin contracts behind SPEC §6 (execution and validation).

Three kinds of plugin, each found through an entry-point group so that a deployment can
add its own without touching the engine:

- ``memorepair.operators``: repair operators (recompute / regen / param), each building a
  successor for one withdrawn artifact and validating it before it may be published;
- ``memorepair.executors``: deterministic functions that replay a recorded ``Recipe``;
- ``memorepair.backends``: tool back-ends that chain skills and ``tool.call`` recipes run
  against (in a sandboxed subprocess for chain skills).

Operators only ever see ``RepairContext``: the usable support (retained artifacts,
replacements X_delta, staged successors of required predecessors) and, separately, the
invalidated support they must not draw on (and, for an erasing event, the fingerprints of
the erased text). They never see the database. Their limits
come from `OperatorConfig`, handed to them when the registry is built, never per call.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from memorepair.fingerprints import Matcher
from memorepair.model import Arch, Artifact, EventType, Interface, Kind, Mode, Recipe

Origin = Literal["retained", "replacement", "successor"]


@dataclass(frozen=True)
class Support:
    """One input a successor may be built from, with where it comes from."""

    uid: str
    version: int
    kind: Kind
    arch: Arch | None
    content: str
    meta: Mapping[str, Any]
    origin: Origin


@dataclass(frozen=True)
class RepairContext:
    """Everything an operator may use to build and validate one successor.

    ``support`` follows the artifact's recorded input order: a corrected root appears as
    its replacement, a repaired input as its staged successor, and deleted or unrepaired
    inputs are absent. ``invalidated`` lists the old versions the successor must not draw
    on (validation checks this).
    """

    event_type: EventType
    artifact: Artifact
    support: tuple[Support, ...]
    invalidated: tuple[Artifact, ...]
    interface: Interface | None = None
    #: An erasing event's fingerprints of the erased text (None: the event erases
    #: nothing). A successor whose content, meta or recipe carries one fails validation.
    erased: Matcher | None = None


@dataclass(frozen=True)
class Successor:
    """A staged successor: the next version's content and the support it actually used."""

    content: str
    inputs: tuple[str, ...]
    recipe: Recipe | None = None
    meta: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Validation:
    ok: bool
    reason: str = ""


@runtime_checkable
class Operator(Protocol):
    """A repair operator pi_i for one mode; deterministic for the same context."""

    name: str
    mode: Mode

    def accepts(self, artifact: Artifact) -> bool:
        """Whether this operator can repair the artifact at all (availability, v_i)."""
        ...

    def build(self, ctx: RepairContext) -> Successor: ...

    def validate(self, ctx: RepairContext, successor: Successor) -> Validation: ...


class Executor(Protocol):
    """Replays a recipe: deterministic, pure function of support contents and arguments."""

    def __call__(
        self, support: Sequence[Support], args: Mapping[str, Any], interface: Interface | None
    ) -> str: ...


class Tools(Protocol):
    """Where operators find replay executors and tool back-ends (the registry)."""

    def executor(self, name: str) -> Executor | None: ...

    def backend(
        self, name: str, interface: Interface | None = None, functions: Sequence[str] = ()
    ) -> ToolBackend | None: ...


class ToolBackend(Protocol):
    """A tool that chain skills and ``tool.call`` recipes run against."""

    name: str

    def schema(self) -> Interface:
        """The interface the back-end currently implements."""
        ...

    def call(self, function: str, args: Mapping[str, Any], state: dict[str, Any]) -> Any:
        """Run one call; ``state`` carries the back-end's state across a chain's steps."""
        ...
