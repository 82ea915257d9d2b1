"""Change requests as repair events (SPEC §2): what an update, a correction, a forget, a
tool's new schema ask for, built as event specs from data.

Pure: nothing here reads or writes the database. The API reads what a change needs (the
served version a correction keeps, whether a uid was ever recorded, a tool's served
interface records) and hands it in, so the rules of each change (what is kept when not
given, the default ids and reasons, which uids a migration takes) are one place, the same
from the CLI, MCP and LangGraph, and testable without a server.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TypedDict

from memorepair import toolschema
from memorepair.errors import InputError, UnknownArtifactError, some
from memorepair.interchange import parse_event, read_event
from memorepair.model import Artifact, RepairEventSpec

#: What names a repair event: a spec, its JSON as a mapping or text, or a file.
EventLike = RepairEventSpec | Mapping[str, Any] | Path | str

#: The fields a change of `correct` may carry.
CHANGE_FIELDS = ("uid", "content", "meta", "inputs")


def event_spec(event: EventLike, ns: str) -> RepairEventSpec:
    """The validated spec of `event` in namespace `ns` (an event naming another is refused)."""
    if isinstance(event, RepairEventSpec):
        spec = event
    elif isinstance(event, Path):
        spec = read_event(event)
    elif isinstance(event, str):
        spec = parse_event(event)
    else:
        spec = parse_event(json.dumps(dict(event)))
    if spec.ns != ns:
        if "ns" in spec.model_fields_set:
            raise InputError(
                f"event {spec.id!r} names namespace {spec.ns!r} but this store is {ns!r}"
            )
        spec = spec.model_copy(update={"ns": ns})
    return spec


def event_id_for(verb: str, uid: str) -> str:
    """A fresh event id naming what it does to which uid: readable, unique, valid."""
    readable = re.sub(r"[^A-Za-z0-9._:\-]", "-", uid)[:80]
    return f"{verb}-{readable}-{uuid.uuid4().hex[:12]}"


def update_id(uid: str) -> str:
    """A fresh event id for an update: readable, unique, and a valid event id."""
    return event_id_for("update", uid)


def update(
    uid: str,
    *,
    content: str | None,
    meta: Mapping[str, Any] | None,
    inputs: Sequence[str] | None,
) -> dict[str, Any]:
    """The one change of an `update`: what is not given is kept from the served version."""
    if content is None and meta is None and inputs is None:
        raise InputError(f"update of {uid!r}: give content, meta or inputs to change")
    return {"uid": uid, "content": content, "meta": meta, "inputs": inputs}


def requested(changes: Sequence[Mapping[str, Any]]) -> Sequence[Mapping[str, Any]]:
    """The changes of one `correct` event: at least one."""
    if not changes:
        raise InputError("correct: give at least one change ({'uid': ..., 'content': ...})")
    return changes


def changed_uid(change: Mapping[str, Any]) -> str:
    """The uid a change of `correct` names, once its shape is checked."""
    uid = change.get("uid")
    if not isinstance(uid, str):
        raise InputError(f"a change needs a string 'uid', got {change!r:.120}")
    stray = sorted(set(change) - set(CHANGE_FIELDS))
    if stray:
        raise InputError(f"change of {uid!r}: unknown fields {stray} (uid, content, meta, inputs)")
    return uid


def replacement(change: Mapping[str, Any], served: Artifact | None, ns: str) -> dict[str, Any]:
    """X_delta for one change: its served version (`served`) with what the change gives."""
    uid = changed_uid(change)
    if served is None:
        raise UnknownArtifactError(
            f"update of {uid!r}: no served version in namespace {ns!r} (see "
            f"`memorepair audit lineage {uid}`: it is withdrawn, deleted or unknown)"
        )
    content = change.get("content")
    result: dict[str, Any] = {
        "replaces": uid,
        "content": served.content if content is None else content,
    }
    if change.get("meta") is not None:
        result["meta"] = dict(change["meta"])
    if change.get("inputs") is not None:
        result["inputs"] = list(change["inputs"])
    return result


def correction(
    replacements: Sequence[Mapping[str, Any]], *, reason: str, event_id: str | None, erase: bool
) -> dict[str, Any]:
    """One `correct` event over the replacements (one barrier for all of them)."""
    uids = [r["replaces"] for r in replacements]
    return {
        "id": event_id or event_id_for("correct", uids[0]),
        "type": "correct",
        "roots": uids,
        "reason": reason or f"correction of {', '.join(uids[:3])}",
        "replacements": [dict(r) for r in replacements],
        "erase": erase,
    }


def forget_roots(uids: str | Sequence[str]) -> list[str]:
    """The roots a forget names (one uid or several; at least one)."""
    roots = [uids] if isinstance(uids, str) else list(uids)
    if not roots:
        raise InputError("forget: name at least one uid")
    return roots


def deletion(
    roots: Sequence[str], *, unknown: Sequence[str], ns: str, reason: str, event_id: str | None
) -> dict[str, Any]:
    """One `delete` event over `roots`; refused if any was never recorded (`unknown`):
    a withdrawn uid can be forgotten, a uid nobody recorded is a mistake."""
    if unknown:
        raise UnknownArtifactError(
            f"forget: {some(list(unknown), 'uid')} never recorded in namespace {ns!r}"
        )
    return {
        "id": event_id or event_id_for("forget", roots[0]),
        "type": "delete",
        "roots": list(roots),
        "reason": reason or f"forget {', '.join(roots[:3])}",
    }


def interface_record(tool: str, schema: Any, *, uid: str | None) -> dict[str, Any]:
    """A tool's interface (its schema) as the artifact `tool:<name>` (or `uid`)."""
    interface = toolschema.migration(tool, None, schema).interface.model_dump(mode="json")
    return {
        "uid": uid or f"tool:{tool}",
        "kind": "record",
        "content": json.dumps(interface, sort_keys=True),
        "meta": {"tool": tool, "interface": interface},
    }


class MigrationOptions(TypedDict, total=False):
    """What a caller may say about a tool's migration beyond the tool and its new schema
    (each defaults to what the served interface artifacts and the two schemas show)."""

    old_schema: Any
    roots: Sequence[str] | None
    renames: Mapping[str, str] | None
    param_renames: Mapping[str, Mapping[str, str]] | None
    reason: str
    event_id: str | None


def tool_migration(
    tool: str,
    new_schema: Any,
    found: Sequence[Artifact],
    *,
    ns: str,
    old_schema: Any = None,
    roots: Sequence[str] | None = None,
    renames: Mapping[str, str] | None = None,
    param_renames: Mapping[str, Mapping[str, str]] | None = None,
    reason: str = "",
    event_id: str | None = None,
) -> tuple[dict[str, Any], toolschema.Migration]:
    """The `migrate` event for `tool` changing to `new_schema`, from the served artifacts
    that mention it (`found`): the old schema defaults to the served interface record's,
    the roots to every served interface record of the tool, the maps to what the two
    schemas show unambiguously."""
    interfaces = [a for a in found if _interface_of(a, tool)]
    root_uids = list(roots) if roots else [a.uid for a in interfaces]
    if not root_uids:
        raise UnknownArtifactError(
            f"tool {tool!r} has no served interface artifact in namespace {ns!r}: "
            "record one first (record_interface / MCP tool_register) or name the roots"
        )
    if old_schema is None:
        old_schema = next((a.meta["interface"] for a in interfaces if a.uid in root_uids), None)
    migration = toolschema.migration(
        tool, old_schema, new_schema, renames=renames, param_renames=param_renames
    )
    spec = {
        "id": event_id or event_id_for("migrate", tool),
        "type": "migrate",
        "roots": root_uids,
        "reason": reason or f"tool {tool} changed its interface",
        "interface": migration.interface.model_dump(mode="json"),
    }
    return spec, migration


def _interface_of(artifact: Artifact, tool: str) -> bool:
    return artifact.meta.get("tool") == tool and isinstance(artifact.meta.get("interface"), dict)
