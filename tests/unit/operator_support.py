"""Builders shared by the operator tests, and test-only tool back-ends.

The back-ends live in a plain module (not a test file) so that the chain sandbox can
rebuild them in its subprocess from their import path.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from memorepair.model import (
    Arch,
    Artifact,
    EventType,
    FunctionSpec,
    Interface,
    Kind,
    Recipe,
    Visibility,
)
from memorepair.operators.base import Origin, RepairContext, Support
from memorepair.operators.builtin import build_registry
from memorepair.operators.registry import OperatorRegistry
from memorepair.sample.tools import register_tools
from memorepair.settings import OperatorConfig


def registry(config: OperatorConfig | None = None) -> OperatorRegistry:
    """The built-in registry (no entry-point plugins) with the sample's `currency` tool."""
    built = build_registry(config or OperatorConfig(), plugins=False)
    register_tools(built)
    return built


def sup(
    uid: str,
    content: str,
    *,
    version: int = 1,
    kind: Kind = Kind.RECORD,
    arch: Arch | None = None,
    meta: Mapping[str, Any] | None = None,
    origin: Origin = "retained",
) -> Support:
    return Support(uid, version, kind, arch, content, dict(meta or {}), origin)


def art(
    uid: str,
    content: str = "",
    *,
    kind: Kind = Kind.RECORD,
    arch: Arch | None = None,
    version: int = 1,
    recipe: Recipe | None = None,
    meta: Mapping[str, Any] | None = None,
    inputs: Sequence[str] = (),
    visibility: Visibility = Visibility.WITHDRAWN,
) -> Artifact:
    return Artifact(
        uid=uid,
        version=version,
        ns="default",
        kind=kind,
        arch=arch,
        content=content,
        recipe=recipe,
        meta=dict(meta or {}),
        visibility=visibility,
        inputs=list(inputs),
    )


def as_artifact(item: Support) -> Artifact:
    """An invalidated old version with the same content and meta as a support item."""
    return art(
        item.uid, item.content, kind=item.kind, arch=item.arch, meta=item.meta, version=item.version
    )


def ctx(
    artifact: Artifact,
    support: Iterable[Support],
    invalidated: Iterable[Artifact] = (),
    *,
    event: EventType = EventType.DELETE,
    interface: Interface | None = None,
) -> RepairContext:
    return RepairContext(
        event_type=event,
        artifact=artifact,
        support=tuple(support),
        invalidated=tuple(invalidated),
        interface=interface,
    )


class SpinBackend:
    """A tool whose ``spin`` never returns (for the sandbox timeout test)."""

    name = "spin"

    def schema(self) -> Interface:
        return Interface(
            tool="spin",
            functions={"spin": FunctionSpec(), "noop": FunctionSpec()},
        )

    def call(self, function: str, args: Mapping[str, Any], state: dict[str, Any]) -> Any:
        if function == "spin":
            while True:
                pass
        return None


class HogBackend:
    """A tool whose ``hog`` allocates far beyond the sandbox's address-space limit."""

    name = "hog"

    def schema(self) -> Interface:
        return Interface(tool="hog", functions={"hog": FunctionSpec()})

    def call(self, function: str, args: Mapping[str, Any], state: dict[str, Any]) -> Any:
        return len(bytearray(8 << 30))


def upper_join(support: Sequence[Support], args: Mapping[str, Any], interface: Any) -> str:
    """A plugin executor (loaded through a fake entry point in the registry tests)."""
    return " ".join(s.content.upper() for s in support)


class TicketBackend:
    """A ticket tool whose ``close_ticket`` takes an integer id (before a retype)."""

    name = "tickets"
    id_type = "integer"

    def schema(self) -> Interface:
        return Interface(
            tool="tickets",
            functions={
                "close_ticket": FunctionSpec(
                    params={"ticket_id": self.id_type, "note": "string"}, required=["ticket_id"]
                )
            },
        )

    def call(self, function: str, args: Mapping[str, Any], state: dict[str, Any]) -> Any:
        ticket = args["ticket_id"]
        if self.id_type == "string":  # the new API takes the id as text
            ticket = int(ticket)
        if not isinstance(ticket, int) or isinstance(ticket, bool):
            raise TypeError(f"ticket_id {ticket!r} is not an id")
        return {"closed": ticket}


class TicketBackendV2(TicketBackend):
    """The same tool after a migration that retyped ``ticket_id`` to a string."""

    id_type = "string"


def ticket_retype() -> Interface:
    """The migrate event's interface: only the type of ``close_ticket.ticket_id`` changed."""
    schema = TicketBackendV2().schema()
    return Interface(
        tool=schema.tool,
        functions=schema.functions,
        retypes={"close_ticket": {"ticket_id": "integer"}},
    )
