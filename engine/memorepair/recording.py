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

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from memorepair.codec import canonical_json
from memorepair.errors import DatabaseError, InputError, UnknownArtifactError, some
from memorepair.interchange import Memory, Skeleton, index_memory, order_skeleton, with_inputs
from memorepair.model import ArtifactIn, artifact_key, version_id
from memorepair.store import Store, Tx

#: Content bytes one import batch reads and sends at most (besides MEMOREPAIR_BATCH_SIZE).
IMPORT_BATCH_BYTES = 16 << 20


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
    """Import artifacts and edges already in memory (the API's `import_items`)."""
    for artifact in memory.artifacts:
        _check_size(store, artifact, memory.lines.get(artifact.uid))
    by_uid = {a.uid: a for a in memory.artifacts}
    return _import(store, ns, Skeleton.of(memory), lambda uids: [by_uid[u] for u in uids], progress)


def import_file(
    store: Store,
    ns: str,
    path: Path,
    *,
    progress: Callable[[int, int], None] = lambda done, total: None,
) -> ImportReport:
    """Import a memory file, streaming: validated whole first, contents read per batch."""
    index = index_memory(path, store.settings.max_content_bytes)
    return _import(store, ns, index.skeleton, index.load, progress)


def _check_size(store: Store, artifact: ArtifactIn, line: int | None) -> None:
    size = len(artifact.content.encode("utf-8"))
    limit = store.settings.max_content_bytes
    if size > limit:
        raise InputError(
            f"line {line or '?'}: artifact {artifact.uid!r} content is {size} bytes, over "
            f"MEMOREPAIR_MAX_CONTENT_BYTES={limit}"
        )


def _import(
    store: Store,
    ns: str,
    skeleton: Skeleton,
    load: Callable[[Sequence[str]], list[ArtifactIn]],
    progress: Callable[[int, int], None],
) -> ImportReport:
    """Refuse existing uids and bad graphs, then write input-first in batches (all or none)."""
    store.require_schema()
    keys = [artifact_key(ns, u) for u in sorted(skeleton.referenced())]
    heads = {row["uid"]: row for row in store.read("store/heads", keys=keys)}
    for uid in sorted(set(skeleton.inputs) & set(heads)):
        head = heads[uid]
        state = "deleted" if head["removed"] else f"at version {head['version']}"
        raise InputError(
            f"line {skeleton.lines.get(uid, '?')}: artifact {uid!r} already exists ({state}); "
            "artifacts are immutable: change one with a 'correct' event, or use a new uid"
        )
    known = {uid for uid, row in heads.items() if not row["removed"]}
    order, inputs = order_skeleton(skeleton, known)
    report = ImportReport()
    written: list[str] = []
    size = store.settings.batch_size
    try:
        for uids in _batches(order, skeleton.sizes, size):
            batch = [with_inputs(a, inputs[a.uid]) for a in load(uids)]
            rows = store.transaction(partial(_write_batch, ns=ns, batch=batch))
            written += [row["vid"] for row in rows]
            report.written += len(rows)
            report.live += sum(1 for row in rows if row["live"])
            report.withdrawn_late += [row["uid"] for row in rows if not row["live"]]
            progress(report.written, len(order))
        report.related = _write_related(store, ns, skeleton)
    except DatabaseError:
        if written:  # nothing half-imported: take back the batches that did commit
            for start in range(0, len(written), size):
                store.write("store/delete_versions", vids=written[start : start + size])
        raise
    return report


def _batches(order: list[str], sizes: dict[str, int], count: int) -> Iterator[list[str]]:
    """`order` cut into batches of at most `count` artifacts and about IMPORT_BATCH_BYTES
    of content: a batch's contents are what an import holds in memory at once."""
    batch: list[str] = []
    held = 0
    for uid in order:
        if batch and (len(batch) >= count or held + sizes.get(uid, 0) > IMPORT_BATCH_BYTES):
            yield batch
            batch, held = [], 0
        batch.append(uid)
        held += sizes.get(uid, 0)
    if batch:
        yield batch


def _write_related(store: Store, ns: str, skeleton: Skeleton) -> int:
    pairs = [(e.src, e.dst) for e in skeleton.edges if e.rel == "RELATED"] + skeleton.related
    rows = [{"src": artifact_key(ns, a), "dst": artifact_key(ns, b)} for a, b in pairs]
    for start in range(0, len(rows), store.settings.batch_size):
        store.write("store/create_related", rows=rows[start : start + store.settings.batch_size])
    return len(rows)


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
    heads = {row["uid"]: row for row in store.read("store/heads", keys=keys)}
    if artifact.uid in heads:
        raise InputError(
            f"artifact {artifact.uid!r} already exists; change it with a 'correct' event or use "
            "a new uid"
        )
    missing = [u for u in artifact.inputs if u not in heads or heads[u]["removed"]]
    if missing:
        raise UnknownArtifactError(
            f"artifact {artifact.uid!r}: {some(missing, 'input')} not current artifacts in "
            f"namespace {ns!r} (deleted, or never recorded)"
        )
    rows = store.transaction(partial(_write_batch, ns=ns, batch=[artifact]))
    return rows[0]


def _write_batch(tx: Tx, ns: str, batch: Sequence[ArtifactIn]) -> list[dict[str, Any]]:
    in_batch = {a.uid for a in batch}
    outside = sorted({u for a in batch for u in a.inputs if u not in in_batch})
    locked = tx.run("store/lock_heads", keys=[artifact_key(ns, u) for u in outside])
    state: dict[str, tuple[bool, str | None]] = {
        row["uid"]: (bool(row["live"]), row["held_by"]) for row in locked
    }
    lost = [u for u in outside if u not in state]
    if lost:
        raise UnknownArtifactError(f"{some(lost, 'input')} disappeared while recording; retry")
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
                "recipe": canonical_json(artifact.recipe.model_dump() if artifact.recipe else None),
                "meta": canonical_json(artifact.meta),
                "inputs": list(artifact.inputs),
                "input_keys": [artifact_key(ns, u) for u in artifact.inputs],
                "live": live,
                "held_by": held_by,
            }
        )
    tx.run("store/create_artifacts", ns=ns, rows=rows)
    return [
        {"vid": r["vid"], "uid": r["uid"], "live": r["live"], "held_by": r["held_by"]} for r in rows
    ]
