"""`reindex`: re-embed a namespace with the configured embedder, and redo its meta terms.

Changing the model (or its dimension) leaves the namespace's embeddings in the old
vector space; search refuses to compare across spaces, so the namespace is re-embedded
here, in batches, with progress. The space is marked `reindexing` first (search refuses
meanwhile rather than answer from a mix) and `ready` once every served or staged version
has an embedding of the new model. Meta terms are rewritten for every version, since the
searchable meta fields may have changed too. It refuses while a repair of the namespace
is open: its staged successors would be embedded with the model they were staged with.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from memorepair import queries
from memorepair.embedding import Embedder, Indexing, Space, embed_rows, embeds, meta_terms
from memorepair.errors import EmbeddingError
from memorepair.store import VECTOR_INDEX, Store, VectorShape

AWAIT_VECTOR_INDEX = queries.named("serving/reindex/await_vector_index")
CLEAR_REBUILD = queries.named("serving/reindex/clear_rebuild")
MARK_REBUILD = queries.named("serving/reindex/mark_rebuild")
DROP_VECTOR_INDEX = queries.named("serving/reindex/drop_vector_index")
READ_SEARCH_TEXT = queries.named("serving/reindex/read_search_text")
REINDEX_TARGETS = queries.named("serving/reindex/reindex_targets")
SET_SPACE = queries.named("serving/reindex/set_space")
WRITE_SEARCH_FIELDS = queries.named("serving/reindex/write_search_fields")


@dataclass(frozen=True)
class ReindexReport:
    model: str
    dimension: int
    versions: int
    embedded: int
    seconds: float

    def as_dict(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "dimension": self.dimension,
            "versions": self.versions,
            "embedded": self.embedded,
            "seconds": self.seconds,
        }


def reindex(
    store: Store,
    ns: str,
    indexing: Indexing,
    *,
    open_events: Sequence[Mapping[str, Any]],
    force: bool = False,
    progress: Callable[[int, int], None] = lambda done, total: None,
) -> ReindexReport:
    """Embed every served or staged version whose embedding is not of the configured model
    (all of them with `force`), rewrite every version's meta terms, then mark it ready."""
    started = time.perf_counter()
    embedder = indexing.embedder
    if embedder is None:
        raise EmbeddingError("embeddings are off (MEMOREPAIR_EMBEDDINGS=false): nothing to do")
    if open_events:
        ids = [row["id"] for row in open_events][:5]
        raise EmbeddingError(
            f"namespace {ns!r} has open repair events {ids}: finish them first "
            "(`memorepair resume`), then reindex"
        )
    space = Space(embedder.name, embedder.dimension)
    store.write(SET_SPACE, ns=ns, model=space.model, dimension=space.dimension, state="reindexing")
    targets = store.read(REINDEX_TARGETS, ns=ns)
    embedded = done = 0
    for batch in store.batched(targets):
        stale = {row["vid"] for row in batch if force or row["model"] != space.model}
        embedded += _rewrite(store, batch, stale, embedder, indexing.meta_fields)
        done += len(batch)
        progress(done, len(targets))
    store.write(SET_SPACE, ns=ns, model=space.model, dimension=space.dimension, state="ready")
    return ReindexReport(
        space.model, space.dimension, len(targets), embedded, time.perf_counter() - started
    )


def _rewrite(
    store: Store,
    batch: list[dict[str, Any]],
    stale: set[str],
    embedder: Embedder,
    meta_fields: tuple[str, ...],
) -> int:
    """One batch's search fields: meta terms for every version, embeddings for the
    `stale` ones; returns how many versions got an embedding."""
    rows = store.read(READ_SEARCH_TEXT, vids=[row["vid"] for row in batch])
    wanted = []
    for row in rows:
        meta = json.loads(row["meta"]) if row["meta"] else None
        row["meta_terms"] = meta_terms(meta, meta_fields)
        if row["vid"] in stale and embeds(meta):  # memorepair_embed: false stays so
            wanted.append(row)
    fresh = embed_rows(embedder, wanted)
    fields = ("embedding", "embedding_model", "embedding_dim")
    writes = [
        {"vid": r["vid"], "meta_terms": r["meta_terms"], **{f: r.get(f) for f in fields}}
        for r in rows
    ]
    store.write(WRITE_SEARCH_FIELDS, rows=writes)
    return sum(1 for r in fresh if r["embedding"] is not None)


#: How long `compact` waits for the rebuilt vector index (1e5 vectors took ~2 min here).
COMPACT_TIMEOUT_S = 3600


def compact(store: Store, vector: VectorShape, timeout_s: int = COMPACT_TIMEOUT_S) -> float:
    """Rebuild the vector index from scratch (`reindex --compact`) with the HNSW shape
    `vector` (the settings'); returns its seconds.

    An index filled by many small transactions (every record, every embedding the writer
    adds after it) is a pile of small HNSW segments, and a query searches each of them:
    built again in one bulk population, the same vectors answered a k-10 query several
    times faster (docs/decisions.md, decision 19). The index spans every namespace, so
    this does too. While it is rebuilt (an `IndexRebuild` node says so), vector and hybrid
    search take the exact path (every served version scored): slower, never less exact;
    a compaction killed half-way leaves them there until it is run again. Nothing is
    re-embedded.
    """
    started = time.perf_counter()
    store.write(MARK_REBUILD)  # searches stop asking the index (a crash leaves it: run again)
    store.write(DROP_VECTOR_INDEX)
    store.write(VECTOR_INDEX, **vector.params())  # the schema's own statement
    store.read(AWAIT_VECTOR_INDEX, timeout_s=timeout_s)
    store.write(CLEAR_REBUILD)
    return time.perf_counter() - started
