"""The demo the README's `make demo` runs: the sample memory and its three events.

It loads a small travel agent's memory into its namespace (clearing what a previous demo
left there), registers the sample's own `currency` tool (only here: production
registries never carry it), repairs one `delete`, one `correct` and one `migrate` event,
and checks the barrier invariant over the whole namespace. The memory stays, so the
audit commands the CLI prints afterwards have something to show; the next demo run
clears it. The CLI's `demo` command only prints what this returns.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from memorepair.errors import InputError
from memorepair.events import RepairReport
from memorepair.model import RepairEventSpec
from memorepair.recording import ImportReport

from . import EVENTS, path
from .tools import register_tools

DEMO_NAMESPACE = "demo"


class Memory(Protocol):
    """What the demo uses of a `MemoryStore` (the demo sits below the API it drives)."""

    ns: str

    def apply_schema(self) -> list[str]: ...
    def clear(self) -> None: ...
    def counts(self) -> dict[str, int]: ...
    def audit_events(self) -> list[dict[str, Any]]: ...
    def register_backend(self, backend: Any) -> None: ...
    def import_file(self, path: Path) -> ImportReport: ...
    def event(self, event: Path) -> RepairEventSpec: ...
    def repair(self, event: RepairEventSpec) -> RepairReport: ...
    def stale_served(self) -> list[dict[str, Any]]: ...
    def audit_erasure(self, event_id: str) -> dict[str, Any]: ...


@dataclass
class DemoResult:
    imported: ImportReport
    reports: list[RepairReport] = field(default_factory=list)
    #: The erasure record (and proof) of each event that erased, by event id.
    erasures: dict[str, dict[str, Any]] = field(default_factory=dict)
    stale_served: list[dict[str, Any]] = field(default_factory=list)
    artifacts: dict[str, int] = field(default_factory=dict)


def run_demo(
    memory: Memory,
    *,
    clear_after: bool = False,
    imported: Callable[[ImportReport], None] = lambda report: None,
    before: Callable[[str, RepairEventSpec], None] = lambda name, spec: None,
    after: Callable[[RepairReport, dict[str, Any] | None], None] = lambda report, erasure: None,
) -> DemoResult:
    """Import the sample, repair its events in turn, check the barrier. The memory stays
    for the audit commands (the next run clears it), unless `clear_after`.

    The callbacks let a caller narrate as it goes (the CLI prints each event before and
    after its repair).
    """
    _refuse_foreign_data(memory)
    memory.apply_schema()
    memory.clear()
    register_tools(memory)
    result = DemoResult(memory.import_file(path("memory.jsonl")))
    imported(result.imported)
    for name in EVENTS:
        spec = memory.event(path(name))
        before(name, spec)
        result.reports.append(memory.repair(spec))
        if spec.erases:
            result.erasures[spec.id] = memory.audit_erasure(spec.id)
        after(result.reports[-1], result.erasures.get(spec.id))
    result.stale_served = memory.stale_served()
    result.artifacts = memory.counts()
    if clear_after:
        memory.clear()
    return result


#: The events a demo leaves in its namespace: a namespace with one of them is a demo's.
DEMO_EVENTS = frozenset(("sample-delete-hotel", "sample-correct-budget"))


def _refuse_foreign_data(memory: Memory) -> None:
    """The demo clears its namespace: only its own ('demo', or one a previous demo left
    its memory in), or an empty one."""
    if memory.ns == DEMO_NAMESPACE or not any(memory.counts().values()):
        return
    if {str(e.get("event")) for e in memory.audit_events()} & DEMO_EVENTS:
        return
    raise InputError(
        f"namespace {memory.ns!r} is not empty and the demo clears its namespace; "
        "run it in the default 'demo' namespace or an empty one"
    )
