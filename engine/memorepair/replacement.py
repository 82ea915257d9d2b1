"""What an event does to its roots, inside the barrier transaction (SPEC §2).

`correct` replaces each root by X_delta and `migrate` by the new interface kappa_e: the
replacement is the root's next version, served at once (it is fresh support). A
correction keeps its lineage: its influence edges come from the root's inputs (or the
inputs it declares, pinned or not), written in the barrier's transaction so the next
event's cascade reaches it. Those inputs must be served, and must stay served through
this event's own withdrawal (an input the cascade withdraws would make the replacement
derive from invalidated support): otherwise the event is refused before anything
changes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from memorepair import embedding, queries
from memorepair.codec import stored_json
from memorepair.embedding import Indexing
from memorepair.errors import CascadeBusyError, InputError, UnknownArtifactError, some
from memorepair.model import EventType, RepairEventSpec, artifact_key, event_key, version_id
from memorepair.store import HEADS, LOCK_HEADS, Tx

MAX_VERSIONS = queries.named("replacement/max_versions")
REPLACE_ROOTS = queries.named("replacement/replace_roots")
LINK_REPLACEMENTS = queries.named("replacement/link_replacements")


@dataclass(frozen=True)
class Lineage:
    """Each replaced root's inputs (uids, in order) and the served version of each input
    that is not itself a root of the event (those link to the root's replacement)."""

    inputs: Mapping[str, list[str]]
    versions: Mapping[str, int]


def lock_inputs(tx: Tx, spec: RepairEventSpec, roots: Mapping[str, Mapping[str, Any]]) -> Lineage:
    """Before the withdrawal: lock the replacements' inputs and check they are served."""
    if spec.type is not EventType.CORRECT:
        return Lineage({}, {})
    inputs = {
        r.replaces: list(r.inputs)
        if r.inputs is not None
        else list(roots[artifact_key(spec.ns, r.replaces)]["inputs"] or [])
        for r in spec.replacements
    }
    outside = sorted({u for uids in inputs.values() for u in uids if u not in spec.roots})
    heads = {row["uid"]: row for row in tx.run(LOCK_HEADS, keys=_keys(spec, outside))}
    for replacement in spec.replacements:
        for uid in inputs[replacement.replaces]:
            if uid not in spec.roots:
                _check_input(spec, replacement.replaces, uid, heads.get(uid), replacement.pinned)
    return Lineage(inputs, {uid: int(heads[uid]["version"]) for uid in outside})


def check_still_served(tx: Tx, spec: RepairEventSpec, lineage: Lineage) -> None:
    """After the withdrawal: an input this event's own cascade withdrew is refused."""
    if not lineage.versions:
        return
    heads = tx.run(HEADS, keys=_keys(spec, sorted(lineage.versions)))
    withdrawn = sorted(row["uid"] for row in heads if not row["live"])
    if withdrawn:
        raise InputError(
            f"event {spec.id!r}: replacement inputs derive from the event's own roots, so its "
            f"barrier withdraws them: {some(withdrawn, 'input')}; declare the replacement's "
            "`inputs` without them, or correct those roots in separate events"
        )


def search_fields(indexing: Indexing, spec: RepairEventSpec) -> dict[str, dict[str, Any]]:
    """Each replacement's embedding and meta terms, computed before the barrier's
    transaction (the replacement is served from its commit on); none for a delete."""
    if spec.type is EventType.DELETE or spec.retry_of is not None:
        return {}
    rows = []
    for uid in spec.roots:
        content, meta, _ = spec.delta(uid)
        rows.append({"content": content, "meta": stored_json(meta)})
    rows = embedding.searchable(indexing)(rows)
    fields = ("meta_terms", "embedding", "embedding_model", "embedding_dim")
    return {uid: {f: row[f] for f in fields} for uid, row in zip(spec.roots, rows, strict=True)}


def replace(
    tx: Tx,
    spec: RepairEventSpec,
    roots: Mapping[str, Mapping[str, Any]],
    lineage: Lineage,
    search: Mapping[str, Mapping[str, Any]],
) -> None:
    """Each root's next version, served, with influence edges from its inputs and the
    search fields (`search_fields`) of its own content."""
    ns = spec.ns
    keys = _keys(spec, spec.roots)
    latest = {row["key"]: int(row["version"]) for row in tx.run(MAX_VERSIONS, keys=keys)}
    new_version = {uid: latest[artifact_key(ns, uid)] + 1 for uid in spec.roots}
    rows = []
    for uid in spec.roots:
        content, meta, recipe = spec.delta(uid)
        inputs = lineage.inputs.get(uid, [])
        sources = [new_version[u] if u in new_version else lineage.versions[u] for u in inputs]
        rows.append(
            {
                "old_vid": version_id(ns, uid, int(roots[artifact_key(ns, uid)]["version"])),
                "vid": version_id(ns, uid, new_version[uid]),
                "key": artifact_key(ns, uid),
                "version": new_version[uid],
                "content": content,
                "meta": stored_json(meta),
                "recipe": stored_json(recipe.model_dump() if recipe else None),
                "inputs": inputs,
                "input_vids": [version_id(ns, u, v) for u, v in zip(inputs, sources, strict=True)],
                **search[uid],
            }
        )
    tx.run(REPLACE_ROOTS, event_key=event_key(ns, spec.id), rows=rows)
    tx.run(LINK_REPLACEMENTS, rows=rows)


def _check_input(
    spec: RepairEventSpec,
    root: str,
    uid: str,
    head: Mapping[str, Any] | None,
    pinned: Mapping[str, int],
) -> None:
    where = f"event {spec.id!r}: the replacement of {root!r} has input {uid!r}"
    if head is None or head["removed"]:
        state = "deleted" if head is not None else "not an artifact of this namespace"
        raise UnknownArtifactError(f"{where}, which is {state}")
    version, current = pinned.get(uid), int(head["version"])
    if version is not None and version != current:
        state = "does not exist" if version > current else "is not served any more"
        raise InputError(
            f"event {spec.id!r}: the replacement of {root!r} has input {uid}@{version}, which "
            f"{state} (the served version is {uid}@{current}); re-read it and correct again"
        )
    if not head["live"]:
        raise CascadeBusyError(
            f"{where}, which another event holds withdrawn ({head['held_by'] or 'its barrier'}); "
            "the correction runs once it completes"
        )


def _keys(spec: RepairEventSpec, uids: Any) -> list[str]:
    return [artifact_key(spec.ns, u) for u in uids]
