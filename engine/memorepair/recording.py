"""Writing fresh artifacts: bulk imports and the single `record` of an agent.

Every artifact is written together with its influence edges, in input-first order and in
batches. Each batch first locks the current versions of its inputs, then reads whether
they are served: an artifact derived from withdrawn or removed support is written
withdrawn and joins the audit of the event holding that support. Because the barrier
takes the same locks, a writer either commits before the barrier (and the barrier's
fixpoint reach then sees its edges) or sees the withdrawal; it never publishes a live
artifact on stale support.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from memorepair import queries
from memorepair.codec import stored_json
from memorepair.errors import DatabaseError, InputError, UnknownArtifactError
from memorepair.interchange import Memory, influence_order
from memorepair.model import ArtifactIn, artifact_key, version_id
from memorepair.store import Store, Tx

CREATE_ARTIFACTS = queries.named("store/create_artifacts")
CREATE_RELATED = queries.named("store/create_related")
DELETE_VERSIONS = queries.named("store/delete_versions")
HEADS = queries.named("store/heads")
LOCK_HEADS = queries.named("store/lock_heads")


@dataclass
class ImportReport:
    written: int = 0
    live: int = 0
    withdrawn_late: list[str] = field(default_factory=list)
    related: int = 0

    def as_dict(self) -> dict[str, Any]:
        return {
            "written": self.written,
            "live": self.live,
            "withdrawn_late": self.withdrawn_late,
            "related_edges": self.related,
        }


def import_memory(
    store: Store,
    ns: str,
    memory: Memory,
    *,
    progress: Callable[[int, int], None] = lambda done, total: None,
) -> ImportReport:
    store.require_schema()
    settings = store.settings
    for artifact in memory.artifacts:
        size = len(artifact.content.encode("utf-8"))
        if size > settings.max_content_bytes:
            raise InputError(
                f"line {memory.lines.get(artifact.uid, '?')}: artifact {artifact.uid!r} content is "
                f"{size} bytes, over MEMOREPAIR_MAX_CONTENT_BYTES={settings.max_content_bytes}"
            )
    file_uids = {a.uid for a in memory.artifacts}
    referenced = file_uids | {u for a in memory.artifacts for u in a.inputs}
    referenced |= {u for e in memory.edges for u in (e.src, e.dst)}
    heads = {
        row["uid"]: row
        for row in store.read(HEADS, keys=[artifact_key(ns, u) for u in sorted(referenced)])
    }
    for uid in sorted(file_uids & set(heads)):
        head = heads[uid]
        state = "deleted" if head["removed"] else f"at version {head['version']}"
        raise InputError(
            f"line {memory.lines.get(uid, '?')}: artifact {uid!r} already exists ({state}); "
            "artifacts are immutable: change one with a 'correct' event, or use a new uid"
        )
    known = {uid for uid, row in heads.items() if not row["removed"]}
    ordered = influence_order(memory, known)
    report = ImportReport()
    written: list[str] = []
    try:
        for start in range(0, len(ordered), settings.batch_size):
            batch = ordered[start : start + settings.batch_size]
            rows = store.transaction(partial(_write_batch, ns=ns, batch=batch))
            written += [row["vid"] for row in rows]
            report.written += len(rows)
            report.live += sum(1 for row in rows if row["live"])
            report.withdrawn_late += [row["uid"] for row in rows if not row["live"]]
            progress(report.written, len(ordered))
        related = [
            {"src": artifact_key(ns, e.src), "dst": artifact_key(ns, e.dst)}
            for e in memory.edges
            if e.rel == "RELATED"
        ]
        related += [
            {"src": artifact_key(ns, a.uid), "dst": artifact_key(ns, r)}
            for a in memory.artifacts
            for r in a.related
        ]
        for start in range(0, len(related), settings.batch_size):
            store.write(CREATE_RELATED, rows=related[start : start + settings.batch_size])
        report.related = len(related)
    except DatabaseError:
        if written:  # nothing half-imported: take back the batches that did commit
            for start in range(0, len(written), settings.batch_size):
                store.write(DELETE_VERSIONS, vids=written[start : start + settings.batch_size])
        raise
    return report


def record(store: Store, ns: str, artifact: ArtifactIn) -> dict[str, Any]:
    """Record one artifact derived by an agent; its inputs must be current artifacts."""
    store.require_schema()
    size = len(artifact.content.encode("utf-8"))
    if size > store.settings.max_content_bytes:
        raise InputError(
            f"artifact {artifact.uid!r} content is {size} bytes, over "
            f"MEMOREPAIR_MAX_CONTENT_BYTES={store.settings.max_content_bytes}"
        )
    keys = [artifact_key(ns, u) for u in [artifact.uid, *artifact.inputs]]
    heads = {row["uid"]: row for row in store.read(HEADS, keys=keys)}
    if artifact.uid in heads:
        raise InputError(
            f"artifact {artifact.uid!r} already exists; change it with a 'correct' event or use "
            "a new uid"
        )
    missing = [u for u in artifact.inputs if u not in heads or heads[u]["removed"]]
    if missing:
        raise UnknownArtifactError(
            f"artifact {artifact.uid!r}: inputs {missing} are not current artifacts in namespace "
            f"{ns!r} (deleted, or never recorded)"
        )
    rows = store.transaction(partial(_write_batch, ns=ns, batch=[artifact]))
    return rows[0]


def _write_batch(tx: Tx, ns: str, batch: Sequence[ArtifactIn]) -> list[dict[str, Any]]:
    in_batch = {a.uid for a in batch}
    outside = sorted({u for a in batch for u in a.inputs if u not in in_batch})
    locked = tx.run(LOCK_HEADS, keys=[artifact_key(ns, u) for u in outside])
    state: dict[str, tuple[bool, str | None]] = {
        row["uid"]: (bool(row["live"]), row["held_by"]) for row in locked
    }
    lost = [u for u in outside if u not in state]
    if lost:
        raise UnknownArtifactError(f"inputs {lost} disappeared while recording; retry")
    rows: list[dict[str, Any]] = []
    for artifact in batch:  # input-first order, so batch-internal inputs are decided already
        blocking = [state[u] for u in artifact.inputs if not state[u][0]]
        live = not blocking
        held_by = None if live else next((h for _, h in blocking if h), None)
        state[artifact.uid] = (live, held_by)
        rows.append(
            {
                "vid": version_id(ns, artifact.uid, 1),
                "key": artifact_key(ns, artifact.uid),
                "uid": artifact.uid,
                "version": 1,
                "kind": artifact.kind.value,
                "arch": artifact.arch.value if artifact.arch else None,
                "content": artifact.content,
                "value": artifact.value,
                "repair_cost": artifact.repair_cost,
                "recipe": stored_json(artifact.recipe.model_dump() if artifact.recipe else None),
                "meta": stored_json(artifact.meta),
                "inputs": list(artifact.inputs),
                "input_keys": [artifact_key(ns, u) for u in artifact.inputs],
                "live": live,
                "held_by": held_by,
            }
        )
    tx.run(CREATE_ARTIFACTS, ns=ns, rows=rows)
    return [
        {"vid": r["vid"], "uid": r["uid"], "live": r["live"], "held_by": r["held_by"]} for r in rows
    ]
