"""Seeded repair events over a built BFCL memory, as ``RepairEventSpec``.

- ``delete``: a user-turn record or a tool-call record is deleted;
- ``correct``: a tool-call record is replaced by the same call with one argument changed
  (to a value the same parameter takes elsewhere in the data when there is one), chosen so
  that replaying the call's cache really gives a different output;
- ``migrate``: a tool's interface changes (renamed function, renamed parameter, parameter
  type changed to string, or rename of both); the root is the tool's interface record and
  the harness serves the tool through the matching ``MigratedBackend``.
"""

from __future__ import annotations

import json
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from bench.bfcl.backends import BfclBackend, Migration, migrate_interface
from bench.bfcl.builder import (
    Memory,
    as_support,
    iface_uid,
    make_backends,
)
from bench.bfcl.executors import build_cache_content
from memorepair.codec import canonical_json
from memorepair.errors import InputError
from memorepair.model import ArtifactIn, EventType, Interface, RepairEventSpec, Replacement

DEFAULT_SEED = 7
DEFAULT_PER_TYPE = 4
_MIGRATION_KINDS = ("function", "param", "type", "function+param")
_RETYPABLE = frozenset({"integer", "number", "boolean"})


@dataclass(frozen=True)
class BenchEvent:
    """An event plus, for a migration, the change the tool's back-end must serve."""

    spec: RepairEventSpec
    migration: Migration | None = None


def _calls(memory: Memory) -> list[ArtifactIn]:
    return [a for a in memory.artifacts if "call" in a.meta]


def _turns(memory: Memory) -> list[ArtifactIn]:
    return [a for a in memory.artifacts if a.meta.get("role") == "user"]


def _alternatives(calls: Sequence[ArtifactIn], call: ArtifactIn, param: str) -> list[Any]:
    """Other values the same parameter of the same function takes in the memory."""
    function = call.meta["call"]["function"]
    current = call.meta["call"]["args"][param]
    seen: dict[str, Any] = {}
    for other in calls:
        c = other.meta["call"]
        if c["function"] == function and param in c["args"]:
            value = c["args"][param]
            if type(value) is type(current) and value != current:
                seen.setdefault(canonical_json(value), value)
    fallback: Any = None
    if isinstance(current, bool):
        fallback = not current
    elif isinstance(current, int | float):
        fallback = current + 1
    elif isinstance(current, str):
        fallback = current + "_corrected"
    values = [seen[k] for k in sorted(seen)]
    return values + ([fallback] if fallback is not None else [])


def _output_changes(
    memory: Memory, backends: Mapping[str, BfclBackend], call: ArtifactIn, new_content: str
) -> bool:
    by_uid = memory.by_uid()
    cache = next(a for a in memory.artifacts if a.kind == "cache" and a.inputs[0] == call.uid)
    support = [as_support(by_uid[u]) for u in cache.inputs]
    support[0] = as_support(call.model_copy(update={"content": new_content}), version=2)
    assert cache.recipe is not None
    try:
        replayed = build_cache_content(support, cache.recipe.args, None, backends)
    except Exception:
        return True  # the corrected call no longer runs: its output certainly changed
    return replayed != cache.content


def _correction(
    memory: Memory, backends: Mapping[str, BfclBackend], call: ArtifactIn, rng: random.Random
) -> Replacement | None:
    calls = _calls(memory)
    args = call.meta["call"]["args"]
    for param in rng.sample(sorted(args), len(args)):
        for value in _alternatives(calls, call, param):
            new_call = {"function": call.meta["call"]["function"], "args": {**args, param: value}}
            content = canonical_json(new_call)
            if _output_changes(memory, backends, call, content):
                assert call.recipe is not None
                return Replacement(
                    replaces=call.uid,
                    content=content,
                    meta={**call.meta, "call": new_call, "corrected": param},
                    recipe=call.recipe.model_copy(
                        update={"args": {"tool": call.meta["tool"], **new_call}}
                    ),
                )
    return None


def _migration(
    memory: Memory, schema: Interface, kind: str, rng: random.Random
) -> Migration | None:
    tool = schema.tool
    used: dict[str, set[str]] = {}
    for c in _calls(memory):
        if c.meta["tool"] == tool:
            used.setdefault(c.meta["call"]["function"], set()).update(c.meta["call"]["args"])
    functions = sorted(f for f, params in used.items() if params or kind == "function")
    if not functions:
        return None
    function = rng.choice(functions)
    params = sorted(used[function])
    if kind == "function":
        return Migration(tool, function, new_function=f"{function}_v2")
    if kind == "type":
        typed = [p for p in params if schema.functions[function].params[p] in _RETYPABLE]
        if not typed:
            return None
        return Migration(tool, function, param=rng.choice(typed), new_type="string")
    param = rng.choice(params)
    new_function = f"{function}_v2" if kind == "function+param" else None
    return Migration(
        tool, function, new_function=new_function, param=param, new_param=f"{param}_v2"
    )


def generate_events(
    memory: Memory,
    *,
    seed: int = DEFAULT_SEED,
    per_type: int = DEFAULT_PER_TYPE,
    ns: str = "default",
) -> list[BenchEvent]:
    """``per_type`` events of each type, their roots valid uids of ``memory``."""
    picker = _Picker(memory, seed, ns)
    events = picker.deletes(per_type, "bfcl") + picker.corrections(per_type, "bfcl")
    return events + picker.migrations(per_type, "bfcl")


def timeline_events(
    memory: Memory,
    *,
    seed: int = DEFAULT_SEED,
    first: int = 1,
    per_type: int = 2,
    rounds: int = 2,
    ns: str = "default",
) -> list[list[BenchEvent]]:
    """The rounds of a deployment's timeline: round 0 with ``first`` events of each type
    (it gives the engine measured costs), then ``rounds`` rounds of ``per_type`` each.

    The events apply one after another to one memory, so they are drawn to stay valid
    in sequence: no root is used twice, each tool is migrated at most once (a second
    migration would be written against an interface that is gone), a round's
    migrations come after its deletions and corrections, and no later event deletes or
    corrects a call record of a tool migrated before (the replacement would be written
    for the old interface). Ids name the round: ``bfcl-r<round>-<type>-<k>``.
    """
    picker = _Picker(memory, seed, ns)
    out = []
    for r, count in enumerate([first] + [per_type] * rounds):
        prefix = f"bfcl-r{r}"
        round_events = picker.deletes(count, prefix) + picker.corrections(count, prefix)
        out.append(round_events + picker.migrations(count, prefix))
    return out


class _Picker:
    """Draws events from one seeded generator, remembering what earlier draws used."""

    def __init__(self, memory: Memory, seed: int, ns: str) -> None:
        self.memory, self.seed, self.ns = memory, seed, ns
        self.rng = random.Random(seed)
        self.backends = make_backends(memory.tasks)
        self.roots: set[str] = set()
        self.migrated: set[str] = set()  # tools migrated by an earlier draw
        self._turns, self._calls = _turns(memory), _calls(memory)
        self._attempt = 0

    def _open_calls(self) -> list[ArtifactIn]:
        return [
            c
            for c in self._calls
            if c.uid not in self.roots and c.meta["tool"] not in self.migrated
        ]

    def deletes(self, count: int, prefix: str) -> list[BenchEvent]:
        events = []
        for k in range(count):
            pool = [t for t in self._turns if t.uid not in self.roots]
            if k % 2 == 1:
                pool = self._open_calls()
            if not pool:
                raise InputError(f"no {'call record' if k % 2 else 'user turn'} left to delete")
            root = self.rng.choice(pool)
            self.roots.add(root.uid)
            what = "user turn" if k % 2 == 0 else "tool-call record"
            spec = RepairEventSpec(
                id=f"{prefix}-delete-{k}",
                type=EventType.DELETE,
                roots=[root.uid],
                ns=self.ns,
                reason=f"{what} deleted",
            )
            events.append(BenchEvent(spec))
        return events

    def corrections(self, count: int, prefix: str) -> list[BenchEvent]:
        events: list[BenchEvent] = []
        calls = self._open_calls()
        for call in self.rng.sample(calls, len(calls)):
            if len(events) == count:
                break
            replacement = _correction(self.memory, self.backends, call, self.rng)
            if replacement is None:
                continue
            self.roots.add(call.uid)
            spec = RepairEventSpec(
                id=f"{prefix}-correct-{len(events)}",
                type=EventType.CORRECT,
                roots=[call.uid],
                ns=self.ns,
                reason=f"argument of {call.meta['call']['function']} corrected",
                replacements=[replacement],
            )
            events.append(BenchEvent(spec))
        if len(events) < count:
            raise InputError(f"only {len(events)} of {count} corrections found")
        return events

    def migrations(self, count: int, prefix: str) -> list[BenchEvent]:
        tools = self.memory.tools()
        events: list[BenchEvent] = []
        tries = 0
        while len(events) < count and tries < count * 4 + len(tools) * 4:
            kind = _MIGRATION_KINDS[self._attempt % len(_MIGRATION_KINDS)]
            tool = tools[(tries * 3 + self.seed) % len(tools)]
            tries += 1
            if tool in self.migrated:
                continue
            m = _migration(self.memory, self.backends[tool].schema(), kind, self.rng)
            if m is None:
                continue
            self._attempt += 1
            self.migrated.add(tool)
            spec = RepairEventSpec(
                id=f"{prefix}-migrate-{len(events)}",
                type=EventType.MIGRATE,
                roots=[iface_uid(tool)],
                ns=self.ns,
                reason=m.describe(),
                interface=migrate_interface(self.backends[tool].schema(), m),
            )
            events.append(BenchEvent(spec, m))
        if len(events) < count:
            raise InputError(
                f"only {len(events)} of {count} migrations found ({len(tools)} tools, "
                f"{len(self.migrated)} already migrated): ask for fewer events per type"
            )
        return events


def dump_events(events: Sequence[BenchEvent]) -> str:
    """Event files for the CLI: one ``RepairEventSpec`` JSON object per line."""
    return "".join(
        json.dumps(e.spec.model_dump(mode="json", by_alias=True, exclude_none=True), sort_keys=True)
        + "\n"
        for e in events
    )
