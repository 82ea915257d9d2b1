"""JSON Lines interchange for memories and JSON files for repair events.

A memory file holds one object per line:

    {"type": "artifact", "uid": "...", "kind": "cache", "content": "...", "inputs": [...]}
    {"type": "edge", "src": "a", "dst": "b", "rel": "RELATED"}

Parsing validates every line and the file as a whole (duplicate uids, dangling inputs,
influence cycles) before anything is written, and every error names the line and field.
`NaN` and `Infinity` are not JSON and are refused wherever JSON is read.

A file is imported in two passes (`index_memory`): the first validates every line and
keeps only its skeleton (uid, line, byte offset, inputs, edges), the second reads each
batch's lines again by offset. So an import holds the graph, never the contents: its
memory does not grow with the size of the contents (bench/import_memory.py).
"""

from __future__ import annotations

import errno
import json
import math
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from pydantic import ValidationError

from memorepair.errors import SHOWN_IDS, CycleError, InputError, describe_validation
from memorepair.graphs import topological
from memorepair.model import ArtifactIn, EdgeIn, RepairEventSpec

MAX_LINE_BYTES = 8_000_000


@dataclass(frozen=True)
class Memory:
    """A parsed memory file: artifacts in file order plus standalone edges."""

    artifacts: tuple[ArtifactIn, ...]
    edges: tuple[EdgeIn, ...]
    lines: dict[str, int]


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text[:20]} does not fit a finite number")
    return value


def loads(text: str | bytes) -> Any:
    """`json.loads` without NaN, Infinity or numbers too large for a float."""
    return json.loads(text, parse_constant=_refuse_constant, parse_float=_finite)


def _load_json(text: str, where: str) -> Any:
    try:
        return loads(text)
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
        item = _parse_line(line, f"{source}:{number}")
        if isinstance(item, EdgeIn):
            edges.append(item)
        elif item is not None:
            if item.uid in where:
                raise InputError(
                    f"{source}:{number}: uid {item.uid!r} already defined on line {where[item.uid]}"
                )
            where[item.uid] = number
            artifacts.append(item)
    return Memory(tuple(artifacts), tuple(edges), where)


def read_memory(path: Path) -> Memory:
    try:
        with path.open(encoding="utf-8") as handle:
            return parse_lines(handle, str(path))
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror}") from exc
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not UTF-8 text ({exc.reason})") from exc


class MemoryIndex:
    """A validated memory file as its skeleton plus each artifact line's byte offset.

    `index_memory` builds it in one streaming pass; `load` reads a batch's lines again,
    so the contents are in memory one batch at a time.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.skeleton = Skeleton()
        self.offsets: dict[str, int] = {}

    def load(self, uids: Sequence[str]) -> list[ArtifactIn]:
        out = []
        try:
            with self.path.open("rb") as handle:
                for uid in uids:
                    handle.seek(self.offsets[uid])
                    out.append(self._again(uid, handle.readline()))
        except OSError as exc:
            raise InputError(f"cannot read {self.path}: {exc.strerror}") from exc
        return out

    def _again(self, uid: str, raw: bytes) -> ArtifactIn:
        number = self.skeleton.lines[uid]
        where = f"{self.path}:{number}"
        obj = _load_json(raw.decode("utf-8", errors="strict"), where)
        if not isinstance(obj, dict) or obj.pop("type", "artifact") != "artifact":
            raise InputError(f"{where}: the file changed during the import; nothing was written")
        try:
            artifact = ArtifactIn.model_validate(obj)
        except ValidationError as exc:
            raise InputError(f"{where}: {describe_validation(exc)}") from exc
        if artifact.uid != uid or artifact.inputs != self.skeleton.inputs[uid]:
            raise InputError(f"{where}: the file changed during the import; nothing was written")
        return artifact


def index_memory(path: Path, max_content_bytes: int | None = None) -> MemoryIndex:
    """Validate every line of a memory file, keeping only its skeleton and offsets."""
    index = MemoryIndex(path)
    try:
        with path.open("rb") as handle:
            offset, number = 0, 0
            while raw := handle.readline(MAX_LINE_BYTES + 1):  # a line is read bounded
                number += 1
                if len(raw) > MAX_LINE_BYTES:
                    raise InputError(f"{path}:{number}: line is longer than {MAX_LINE_BYTES} bytes")
                _index_line(index, raw, number, offset, max_content_bytes)
                offset += len(raw)
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror}") from exc
    return index


def _index_line(
    index: MemoryIndex, raw: bytes, number: int, offset: int, max_content_bytes: int | None
) -> None:
    where = f"{index.path}:{number}"
    try:
        line = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{index.path}: not UTF-8 text ({exc.reason}) on line {number}") from exc
    item = _parse_line(line, where)
    if item is None:
        return
    skeleton = index.skeleton
    if isinstance(item, EdgeIn):
        skeleton.edges.append(item)
        return
    if item.uid in skeleton.lines:
        raise InputError(
            f"{where}: uid {item.uid!r} already defined on line {skeleton.lines[item.uid]}"
        )
    size = len(item.content.encode("utf-8"))
    if max_content_bytes is not None and size > max_content_bytes:
        raise InputError(
            f"line {number}: artifact {item.uid!r} content is {size} bytes, over "
            f"MEMOREPAIR_MAX_CONTENT_BYTES={max_content_bytes}"
        )
    skeleton.lines[item.uid] = number
    skeleton.sizes[item.uid] = size
    skeleton.pinned.update(item.pinned)
    skeleton.inputs[item.uid] = list(item.inputs)
    skeleton.related += [(item.uid, r) for r in item.related]
    index.offsets[item.uid] = offset


def _parse_line(line: str, where: str) -> ArtifactIn | EdgeIn | None:
    """One line as an artifact or an edge (None: blank); errors name the line and field."""
    if not line.strip():
        return None
    if len(line) > MAX_LINE_BYTES:
        raise InputError(f"{where}: line is longer than {MAX_LINE_BYTES} bytes")
    obj = _load_json(line, where)
    if not isinstance(obj, dict):
        raise InputError(f"{where}: expected a JSON object, got {type(obj).__name__}")
    # A line without `type` is an artifact (what `record` takes); edges say so.
    kind = obj.pop("type", "artifact")
    try:
        if kind == "artifact":
            return ArtifactIn.model_validate(obj)
        if kind == "edge":
            return EdgeIn.model_validate(obj)
    except ValidationError as exc:
        raise InputError(f"{where}: {describe_validation(exc)}") from exc
    raise InputError(f"{where}: field 'type' must be 'artifact' or 'edge', got {kind!r}")


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


@dataclass
class Skeleton:
    """What whole-file validation and the write order need: the graph without contents."""

    lines: dict[str, int] = field(default_factory=dict)  # uid -> line number
    inputs: dict[str, list[str]] = field(default_factory=dict)  # uid -> recorded inputs
    edges: list[EdgeIn] = field(default_factory=list)
    related: list[tuple[str, str]] = field(default_factory=list)  # artifacts' own lists
    sizes: dict[str, int] = field(default_factory=dict)  # uid -> bytes of its content
    pinned: set[str] = field(default_factory=set)  # inputs some artifact pins (`uid@N`)

    @classmethod
    def of(cls, memory: Memory) -> Skeleton:
        return cls(
            lines=dict(memory.lines),
            inputs={a.uid: list(a.inputs) for a in memory.artifacts},
            edges=list(memory.edges),
            related=[(a.uid, r) for a in memory.artifacts for r in a.related],
            sizes={a.uid: len(a.content) for a in memory.artifacts},
            pinned={u for a in memory.artifacts for u in a.pinned},
        )

    def referenced(self) -> set[str]:
        uids = set(self.inputs) | {u for ins in self.inputs.values() for u in ins}
        uids |= {u for e in self.edges for u in (e.src, e.dst)}
        return uids | {dst for _, dst in self.related}


def influence_order(memory: Memory, known: set[str]) -> list[ArtifactIn]:
    """Artifacts in an order where every input comes first; refuses dangling and cyclic input.

    `known` holds uids that already exist in the store. Standalone INFLUENCES edge lines
    are folded into their target's inputs (they must point at an artifact of this file).
    """
    by_uid = {a.uid: a for a in memory.artifacts}
    order, inputs = order_skeleton(Skeleton.of(memory), known)
    return [with_inputs(by_uid[uid], inputs[uid]) for uid in order]


def with_inputs(artifact: ArtifactIn, inputs: list[str]) -> ArtifactIn:
    """The artifact with its inputs after folding in edge lines (itself if unchanged)."""
    if inputs == artifact.inputs:
        return artifact
    return artifact.model_copy(update={"inputs": inputs})


def order_skeleton(skeleton: Skeleton, known: set[str]) -> tuple[list[str], dict[str, list[str]]]:
    """Input-first order of the file's uids and each one's inputs with edge lines folded in."""
    extra: dict[str, list[str]] = {}
    for edge in skeleton.edges:
        if edge.rel != "INFLUENCES":
            continue
        if edge.dst not in skeleton.inputs:
            raise InputError(
                f"INFLUENCES edge {edge.src!r} -> {edge.dst!r}: the target must be an artifact "
                "of this file (an influence edge is part of recording the derived artifact)"
            )
        extra.setdefault(edge.dst, []).append(edge.src)
    inputs: dict[str, list[str]] = {}
    for uid, recorded in skeleton.inputs.items():
        merged = list(recorded)
        merged += [u for u in extra.get(uid, []) if u not in merged]
        for dep in merged:
            if dep not in skeleton.inputs and dep not in known:
                raise InputError(
                    f"line {skeleton.lines[uid]}: artifact {uid!r} has input {dep!r}, which is "
                    "neither in the file nor a current artifact in the store"
                )
        inputs[uid] = merged
    for edge in skeleton.edges:
        for end in (edge.src, edge.dst):
            if end not in skeleton.inputs and end not in known:
                raise InputError(f"edge {edge.src!r} -> {edge.dst!r}: unknown artifact {end!r}")
    return _topological(inputs, skeleton.inputs), inputs


def _topological(inputs: dict[str, list[str]], by_uid: dict[str, Any]) -> list[str]:
    """Input-first order in file order; a leftover means a cycle, which we name."""
    edges = [(u, uid) for uid, ins in inputs.items() for u in ins if u in by_uid]
    order, leftover = topological(list(inputs), edges)
    if leftover:
        cycle = _a_cycle(inputs, leftover)
        path = " -> ".join(cycle)
        if len(cycle) > 2 * SHOWN_IDS:
            head = " -> ".join(cycle[:SHOWN_IDS])
            path = f"{head} -> ... -> {cycle[-1]} ({len(cycle) - 1:,} artifacts)"
        raise CycleError(f"INFLUENCES edges form a cycle: {path}")
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


def parse_artifact(data: Mapping[str, Any]) -> ArtifactIn:
    """One artifact given as a mapping (`record`), its errors naming its uid and field."""
    try:
        return ArtifactIn.model_validate(dict(data))
    except ValidationError as exc:
        uid = str(data.get("uid", "?"))[:80]
        raise InputError(f"artifact {uid!r}: {describe_validation(exc)}") from exc


def parse_items(items: Iterable[ArtifactIn | Mapping[str, Any]]) -> list[ArtifactIn]:
    """The artifacts of one `record_many`, every one validated first: a bad one is named by
    its position (`item N`, from 1), its uid and field; a uid given twice is refused."""
    artifacts: list[ArtifactIn] = []
    seen: dict[str, int] = {}
    for number, item in enumerate(items, start=1):
        artifact = item if isinstance(item, ArtifactIn) else _parse_item(item, number)
        if artifact.uid in seen:
            raise InputError(
                f"item {number}: uid {artifact.uid!r} is already item {seen[artifact.uid]}"
            )
        seen[artifact.uid] = number
        artifacts.append(artifact)
    return artifacts


def _parse_item(data: Mapping[str, Any], number: int) -> ArtifactIn:
    if not isinstance(data, Mapping):
        raise InputError(
            f"item {number}: expected an artifact (a mapping), got {type(data).__name__}"
        )
    try:
        return ArtifactIn.model_validate(dict(data))
    except ValidationError as exc:
        uid = str(data.get("uid", "?"))[:80]
        raise InputError(f"item {number} (uid {uid!r}): {describe_validation(exc)}") from exc


def create_private(path: Path, *, force: bool) -> TextIO:
    """A new file for writing memory, created 0600 (it holds the memory). An existing file
    is refused unless `force`, and a symbolic link at `path` always: nothing is written
    through a link someone else planted."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | (os.O_TRUNC if force else os.O_EXCL)
    try:
        fd = os.open(path, flags, 0o600)
    except FileExistsError as exc:
        kind = "a symbolic link" if path.is_symlink() else "a file"
        raise InputError(
            f"{path} is {kind} that already exists; choose another name"
            + ("" if path.is_symlink() else " or pass --force to overwrite it")
        ) from exc
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise InputError(f"{path} is a symbolic link; refusing to write through it") from exc
        raise InputError(f"cannot write {path}: {exc.strerror}") from exc
    return os.fdopen(fd, "w", encoding="utf-8")
