"""JSON Lines interchange for memories and JSON files for repair events.

A memory file holds one object per line:

    {"type": "artifact", "uid": "...", "kind": "cache", "content": "...", "inputs": [...]}
    {"type": "edge", "src": "a", "dst": "b", "rel": "RELATED"}

Parsing validates every line and the file as a whole (duplicate uids, dangling inputs,
influence cycles) before anything is written, and every error names the line and field.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from memorepair.errors import CycleError, InputError, describe_validation
from memorepair.graphs import topological
from memorepair.model import ArtifactIn, EdgeIn, RepairEventSpec

MAX_LINE_BYTES = 8_000_000


@dataclass(frozen=True)
class Memory:
    """A parsed memory file: artifacts in file order plus standalone edges."""

    artifacts: tuple[ArtifactIn, ...]
    edges: tuple[EdgeIn, ...]
    lines: dict[str, int]


def _load_json(text: str, where: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        at = f" at line {exc.lineno}" if exc.lineno > 1 else ""
        raise InputError(f"{where}: not valid JSON ({exc.msg}{at})") from exc
    except (ValueError, RecursionError) as exc:  # a huge integer, or nesting too deep
        raise InputError(f"{where}: JSON not accepted ({exc})") from exc


def parse_lines(lines: Iterable[str], source: str = "<input>") -> Memory:
    artifacts: list[ArtifactIn] = []
    edges: list[EdgeIn] = []
    where: dict[str, int] = {}
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        if len(line) > MAX_LINE_BYTES:
            raise InputError(f"{source}:{number}: line is longer than {MAX_LINE_BYTES} bytes")
        obj = _load_json(line, f"{source}:{number}")
        if not isinstance(obj, dict):
            raise InputError(f"{source}:{number}: expected a JSON object, got {type(obj).__name__}")
        kind = obj.pop("type", None)
        try:
            if kind == "artifact":
                artifact = ArtifactIn.model_validate(obj)
                if artifact.uid in where:
                    raise InputError(
                        f"{source}:{number}: uid {artifact.uid!r} already defined on line "
                        f"{where[artifact.uid]}"
                    )
                where[artifact.uid] = number
                artifacts.append(artifact)
            elif kind == "edge":
                edges.append(EdgeIn.model_validate(obj))
            else:
                raise InputError(
                    f"{source}:{number}: field 'type' must be 'artifact' or 'edge', got {kind!r}"
                )
        except ValidationError as exc:
            raise InputError(f"{source}:{number}: {describe_validation(exc)}") from exc
    return Memory(tuple(artifacts), tuple(edges), where)


def read_memory(path: Path) -> Memory:
    try:
        with path.open(encoding="utf-8") as handle:
            return parse_lines(handle, str(path))
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror}") from exc
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not UTF-8 text ({exc.reason})") from exc


def read_event(path: Path) -> RepairEventSpec:
    try:
        raw = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(f"cannot read event file {path}: {exc.strerror}") from exc
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not UTF-8 text ({exc.reason})") from exc
    return parse_event(raw, str(path))


def parse_event(raw: str, source: str = "<event>") -> RepairEventSpec:
    obj = _load_json(raw, source)
    if not isinstance(obj, dict):
        raise InputError(f"{source}: an event is a JSON object, got {type(obj).__name__}")
    try:
        return RepairEventSpec.model_validate(obj)
    except ValidationError as exc:
        raise InputError(f"{source}: {describe_validation(exc)}") from exc


def influence_order(memory: Memory, known: set[str]) -> list[ArtifactIn]:
    """Artifacts in an order where every input comes first; refuses dangling and cyclic input.

    `known` holds uids that already exist in the store. Standalone INFLUENCES edge lines
    are folded into their target's inputs (they must point at an artifact of this file).
    """
    by_uid = {a.uid: a for a in memory.artifacts}
    extra: dict[str, list[str]] = {}
    for edge in memory.edges:
        if edge.rel != "INFLUENCES":
            continue
        if edge.dst not in by_uid:
            raise InputError(
                f"INFLUENCES edge {edge.src!r} -> {edge.dst!r}: the target must be an artifact "
                "of this file (an influence edge is part of recording the derived artifact)"
            )
        extra.setdefault(edge.dst, []).append(edge.src)
    inputs: dict[str, list[str]] = {}
    for artifact in memory.artifacts:
        merged = list(artifact.inputs)
        merged += [u for u in extra.get(artifact.uid, []) if u not in merged]
        for uid in merged:
            if uid not in by_uid and uid not in known:
                raise InputError(
                    f"line {memory.lines[artifact.uid]}: artifact {artifact.uid!r} has input "
                    f"{uid!r}, which is neither in the file nor a current artifact in the store"
                )
        inputs[artifact.uid] = merged
    for edge in memory.edges:
        for end in (edge.src, edge.dst):
            if end not in by_uid and end not in known:
                raise InputError(f"edge {edge.src!r} -> {edge.dst!r}: unknown artifact {end!r}")
    order = _topological(inputs, by_uid)
    return [
        by_uid[uid].model_copy(update={"inputs": inputs[uid]}) if extra.get(uid) else by_uid[uid]
        for uid in order
    ]


def _topological(inputs: dict[str, list[str]], by_uid: dict[str, ArtifactIn]) -> list[str]:
    """Input-first order in file order; a leftover means a cycle, which we name."""
    edges = [(u, uid) for uid, ins in inputs.items() for u in ins if u in by_uid]
    order, leftover = topological(list(inputs), edges)
    if leftover:
        raise CycleError(
            f"INFLUENCES edges form a cycle: {' -> '.join(_a_cycle(inputs, leftover))}"
        )
    return order


def _a_cycle(inputs: dict[str, list[str]], leftover: list[str]) -> list[str]:
    """Walk back along inputs inside the leftover set until a uid repeats."""
    left = set(leftover)
    start = min(left)
    path: list[str] = []
    seen: dict[str, int] = {}
    node = start
    while node not in seen:
        seen[node] = len(path)
        path.append(node)
        node = next(u for u in inputs[node] if u in left)
    cycle = [*path[seen[node] :], node]
    return list(reversed(cycle))


def dump_lines(
    artifacts: Sequence[dict[str, Any]], related: Sequence[tuple[str, str]]
) -> Iterator[str]:
    for artifact in artifacts:
        line = {
            "type": "artifact",
            **{k: v for k, v in artifact.items() if v not in (None, [], {})},
        }
        yield json.dumps(line, ensure_ascii=False, sort_keys=True)
    for src, dst in related:
        yield json.dumps({"type": "edge", "src": src, "dst": dst, "rel": "RELATED"}, sort_keys=True)
