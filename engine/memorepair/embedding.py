"""Embeddings of artifact content: the `Embedder` interface, the offline default, HTTP.

Embeddings are derived state: every served version carries the embedding of its own
content, computed from that content by the configured embedder and stored with the
embedder's `name` and `dimension` (search refuses to compare vectors of two models). The
default needs no network, at install or at run time: `wordllama`'s small static token
embeddings ship inside its wheel and are loaded from the package directory with downloads
disabled. An OpenAI-compatible `/v1/embeddings` endpoint is the alternative
(`MEMOREPAIR_EMBEDDING_BASE_URL`, `_MODEL`, `_API_KEY`).
"""

from __future__ import annotations

import json
import math
import threading
import time
import urllib.error
import urllib.request
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from memorepair import queries
from memorepair.errors import ConfigError, EmbeddingError, MemoRepairError
from memorepair.model import ArtifactIn
from memorepair.store import Store, Tx

CLAIM_SPACE = queries.named("embedding/claim_space")
GET_SPACE = queries.named("embedding/get_space")
MARK_SPACE_STALE = queries.named("embedding/mark_space_stale")

Vector = list[float]

#: Meta `{"memorepair_embed": false}`: the version is never embedded, nor are its
#: successors (which keep the meta). Search finds it by words only; the LangGraph store's
#: `put(..., index=False)` sets it.
EMBED_META = "memorepair_embed"


def embeds(meta: Mapping[str, Any] | None) -> bool:
    """Whether a version with this meta is embedded (all are, unless meta says not)."""
    return not (meta and meta.get(EMBED_META) is False)


#: `(url, payload, headers, timeout_s) -> response body`: the HTTP seam.
Transport = Callable[[str, Mapping[str, Any], Mapping[str, str], float], str]

#: The offline default's model: wordllama's `l2_supercat` token embeddings (MIT), whose
#: 256-dimensional weights ship in the wheel; 64 and 128 are Matryoshka truncations.
WORDLLAMA_CONFIG = "l2_supercat"
WORDLLAMA_DIMENSIONS = (64, 128, 256)


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into vectors; `name` and `dimension` identify the vector space."""

    @property
    def name(self) -> str: ...

    @property
    def dimension(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> list[Vector]:
        """One unit-length vector per text, in order (a batch: callers pass many)."""
        ...


class WordLlamaEmbedder:
    """The offline default: wordllama's static embeddings, loaded from its own wheel.

    The weights and tokenizer are files inside the installed package; the loader is
    pointed at that directory with `disable_download=True`, so a missing file is an error
    here rather than a download. They load on the first `embed` (about 0.4 s), so a store
    that never embeds never loads them. Texts are embedded shortest-first, so each batch
    pads to similar lengths (about 1.4x faster on mixed lengths), and returned in input
    order.
    """

    def __init__(self, dimension: int = 256, batch_size: int = 256) -> None:
        if dimension not in WORDLLAMA_DIMENSIONS:
            raise ConfigError(
                f"MEMOREPAIR_EMBEDDING_DIMENSION: the offline embedder has dimensions "
                f"{list(WORDLLAMA_DIMENSIONS)}, got {dimension}"
            )
        self._model: Any = None
        self._dimension = dimension
        self._batch = batch_size
        self._lock = threading.Lock()  # the tokenizer's padding state is shared

    def _load(self) -> Any:
        try:
            import wordllama
            from wordllama import WordLlama
        except ImportError as exc:  # a core dependency; only a broken install lacks it
            raise ConfigError("the offline embedder needs the 'wordllama' package") from exc
        package = Path(wordllama.__file__).parent
        trunc = None if self._dimension == 256 else self._dimension
        try:
            return WordLlama.load(
                WORDLLAMA_CONFIG, cache_dir=package, dim=256, trunc_dim=trunc, disable_download=True
            )
        except FileNotFoundError as exc:
            raise ConfigError(f"wordllama's packaged weights are missing: {exc}") from exc

    @property
    def name(self) -> str:
        return f"wordllama/{WORDLLAMA_CONFIG}-{self._dimension}"

    @property
    def dimension(self) -> int:
        return self._dimension

    def embed(self, texts: Sequence[str]) -> list[Vector]:
        if not texts:
            return []
        order = np.argsort([len(text) for text in texts], kind="stable")
        with self._lock:
            if self._model is None:
                self._model = self._load()
            matrix = self._model.embed(
                [texts[i] for i in order], norm=False, batch_size=self._batch
            )
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        matrix = np.divide(matrix, norms, out=np.zeros_like(matrix), where=norms > 0)
        ordered = np.empty_like(matrix)
        ordered[order] = matrix
        vectors: list[Vector] = ordered.tolist()
        return vectors


def urllib_transport(
    url: str, payload: Mapping[str, Any], headers: Mapping[str, str], timeout: float
) -> str:
    request = urllib.request.Request(
        url, data=json.dumps(payload).encode("utf-8"), headers=dict(headers), method="POST"
    )
    with urllib.request.urlopen(request, timeout=timeout) as response:
        body: bytes = response.read()
    return body.decode("utf-8")


class HttpEmbedder:
    """An OpenAI-compatible `POST {base_url}/embeddings` endpoint (`/v1` in the base URL).

    Texts go in batches of `batch_size`; the answer's `data[i].index` puts each vector
    back in order. The dimension is the configured one, else learned from the first
    answer; every later vector must have it.
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: str | None = None,
        dimension: int | None = None,
        batch_size: int = 256,
        timeout_s: float = 60.0,
        transport: Transport | None = None,
    ) -> None:
        self._url = base_url.rstrip("/") + "/embeddings"
        self._model = model
        self._key = api_key
        self._dimension = dimension
        self._batch = batch_size
        self._timeout = timeout_s
        self._transport = transport or urllib_transport

    @property
    def name(self) -> str:
        return f"openai/{self._model}"

    @property
    def dimension(self) -> int:
        if self._dimension is None:
            self._dimension = len(self.embed(["dimension probe"])[0])
        return self._dimension

    def embed(self, texts: Sequence[str]) -> list[Vector]:
        vectors: list[Vector] = []
        for start in range(0, len(texts), self._batch):
            vectors += self._request(list(texts[start : start + self._batch]))
        return vectors

    def _request(self, texts: list[str]) -> list[Vector]:
        payload: dict[str, Any] = {"model": self._model, "input": texts}
        headers = {"Content-Type": "application/json"}
        if self._key:
            headers["Authorization"] = f"Bearer {self._key}"
        try:
            body = self._transport(self._url, payload, headers, self._timeout)
        except (urllib.error.URLError, OSError, TimeoutError) as exc:
            raise EmbeddingError(f"embedding endpoint {self._url} failed: {exc}") from exc
        return self._parse(body, len(texts))

    def _parse(self, body: str, expected: int) -> list[Vector]:
        try:
            data = json.loads(body)["data"]
            rows = sorted(data, key=lambda item: int(item.get("index", 0)))
            vectors = [_unit([float(x) for x in row["embedding"]]) for row in rows]
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise EmbeddingError(
                f"embedding endpoint {self._url} answered without data[].embedding: {body[:200]}"
            ) from exc
        if len(vectors) != expected:
            raise EmbeddingError(
                f"embedding endpoint {self._url} returned {len(vectors)} vectors for "
                f"{expected} texts"
            )
        if self._dimension is None and vectors:
            self._dimension = len(vectors[0])
        wrong = {len(v) for v in vectors} - {self._dimension}
        if wrong:
            raise EmbeddingError(
                f"embedding endpoint {self._url} ({self._model}) returned vectors of "
                f"dimension {sorted(wrong)}, expected {self._dimension}"
            )
        return vectors


def _unit(vector: Sequence[float]) -> Vector:
    """Unit length, so cosine is a dot product and every vector is comparable; an empty
    text's zero vector stays zero (cosine treats it as unrelated to everything)."""
    norm = math.sqrt(sum(x * x for x in vector))
    if norm == 0.0 or not math.isfinite(norm):
        return [0.0] * len(vector)
    return [x / norm for x in vector]


def build_embedder(
    *,
    base_url: str | None,
    model: str | None,
    api_key: str | None,
    dimension: int | None,
    batch_size: int,
) -> Embedder:
    """The embedder a configuration names: an OpenAI-compatible endpoint when `base_url`
    is set (`model` then required), else the offline default."""
    if base_url:
        if not model:
            raise ConfigError(
                "MEMOREPAIR_EMBEDDING_MODEL must name the model served at "
                "MEMOREPAIR_EMBEDDING_BASE_URL"
            )
        return HttpEmbedder(
            base_url, model, api_key=api_key, dimension=dimension, batch_size=batch_size
        )
    return WordLlamaEmbedder(dimension or 256, batch_size)


def embed_rows(
    embedder: Embedder, rows: list[dict[str, Any]], text_key: str = "content"
) -> list[dict[str, Any]]:
    """Add `embedding`, `embedding_model` and `embedding_dim` to each row, from its own
    `text_key` (one batched call; rows without text get no embedding)."""
    texts = [str(row.get(text_key) or "") for row in rows]
    wanted = [i for i, text in enumerate(texts) if text]
    vectors = embedder.embed([texts[i] for i in wanted]) if wanted else []
    for row in rows:
        row["embedding"] = None
        row["embedding_model"] = None
        row["embedding_dim"] = None
    for index, vector in zip(wanted, vectors, strict=True):
        rows[index]["embedding"] = vector
        rows[index]["embedding_model"] = embedder.name
        rows[index]["embedding_dim"] = len(vector)
    return rows


def meta_terms(meta: Mapping[str, Any] | None, fields: Sequence[str]) -> list[str] | None:
    """`key=value` terms for the meta fields settings make searchable (filters use them).

    Strings stand as they are, numbers and booleans in JSON form, a list gives one term
    per scalar element; nested maps are not searchable.
    """
    if not meta or not fields:
        return None
    terms: list[str] = []
    for key in fields:
        value = meta.get(key)
        values = value if isinstance(value, list) else [value]
        terms += [f"{key}={term}" for v in values if (term := meta_value(v)) is not None]
    return terms or None


def meta_value(value: Any) -> str | None:
    """The text form of one meta value in a filter term (None: not searchable)."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool | int | float):
        return json.dumps(value)
    return None


@dataclass(frozen=True)
class Space:
    """The vector space of a namespace's embeddings: one model, one dimension."""

    model: str
    dimension: int


def space_of(embedder: Embedder | None) -> Space | None:
    """An embedder's space, or None when embeddings are off (no embedder)."""
    return None if embedder is None else Space(embedder.name, embedder.dimension)


@dataclass(frozen=True)
class Indexing:
    """What a write adds to each version so search finds it: the embedding of its content
    by `embedder` (None: embeddings are off) and the terms of the searchable `meta_fields`
    (MEMOREPAIR_SEARCH_META_FIELDS). Built once per store and handed to every writer."""

    embedder: Embedder | None = None
    meta_fields: tuple[str, ...] = ()

    @property
    def space(self) -> Space | None:
        return space_of(self.embedder)


def searchable(
    indexing: Indexing, *, embed: bool = True
) -> Callable[[list[dict[str, Any]]], list[dict[str, Any]]]:
    """Adds what search needs to rows about to be written (recording, staging): the
    embedding of each row's own `content` (one batched embedder call) and the `meta_terms`
    of its `meta` (canonical JSON text). With embeddings off, or deferred to a backlog
    (`embed=False`), the embedding is null."""
    fields = indexing.meta_fields
    embedder = indexing.embedder if embed else None

    def prepare(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        wanted = []
        for row in rows:
            meta = json.loads(row["meta"]) if row.get("meta") else None
            row["meta_terms"] = meta_terms(meta, fields)
            row["embedding"] = row["embedding_model"] = row["embedding_dim"] = None
            if embeds(meta):
                wanted.append(row)
        if embedder is not None and wanted:
            embed_rows(embedder, wanted)
        return rows

    return prepare


def search_fields(
    indexing: Indexing, artifacts: Sequence[ArtifactIn], *, embed: bool = True
) -> dict[str, dict[str, Any]]:
    """By uid: the embedding of each artifact's own content (one batched embedder call;
    none with `embed=False`) and its meta terms, for the rows `recording` writes."""
    fields = ("meta_terms", "embedding", "embedding_model", "embedding_dim")
    empty = dict.fromkeys(fields)  # no meta, nothing to embed: no terms, no embedding
    needed = [a for a in artifacts if a.meta or (embed and indexing.embedder is not None)]
    rows = searchable(indexing, embed=embed)(
        [{"content": a.content, "meta": json.dumps(a.meta) if a.meta else None} for a in needed]
    )
    found = {a.uid: {f: row[f] for f in fields} for a, row in zip(needed, rows, strict=True)}
    return {a.uid: found.get(a.uid, empty) for a in artifacts}


def claim_space(tx: Tx, ns: str, space: Space | None) -> None:
    """In a write transaction that embeds: the namespace's space must be this one.

    The first embedding write creates it. A writer with another model is refused (and its
    transaction rolled back), so a namespace never mixes two models; with embeddings off
    the space is marked stale, so search refuses until `memorepair reindex`.
    """
    if space is None:
        tx.run(MARK_SPACE_STALE, ns=ns)
        return
    (found,) = tx.run(CLAIM_SPACE, ns=ns, model=space.model, dimension=space.dimension)
    check_space(ns, space, found["model"], found["dimension"])


def check_space(ns: str, space: Space, model: str | None, dimension: int | None) -> None:
    """Refuse a write whose embedder is not the one the namespace was embedded with."""
    if model != space.model or dimension != space.dimension:
        found = {"model": model, "dimension": dimension}
        raise EmbeddingError(
            f"namespace {ns!r} is embedded with {found['model']} (dimension "
            f"{found['dimension']}), but the configured embedder is {space.model} (dimension "
            f"{space.dimension}): run `memorepair reindex` to re-embed it with the new model, "
            "or configure the old one again"
        )


def require_space(store: Store, ns: str, space: Space | None) -> None:
    """Before a repair's barrier: refuse if the configured embedder is not the namespace's
    (its successors would mix two models); with embeddings off, mark the space stale, since
    its successors will have no embedding and search must say so."""
    (found,) = store.read(GET_SPACE, ns=ns)
    if found["model"] is None:
        return
    if space is None:
        store.write(MARK_SPACE_STALE, ns=ns)
        return
    if (found["model"], found["dimension"]) != (space.model, space.dimension):
        raise EmbeddingError(
            f"namespace {ns!r} is embedded with {found['model']} (dimension "
            f"{found['dimension']}), but the configured embedder is {space.model} "
            f"(dimension {space.dimension}): run `memorepair reindex` first, or configure "
            "the old model again; nothing was withdrawn"
        )


UNINDEXED_VERSIONS = queries.named("embedding/unindexed_versions")
WRITE_LATE_EMBEDDINGS = queries.named("embedding/write_late_embeddings")
#: Versions, and characters of their content, a backlog holds at most; `add` waits
#: beyond either, and a held backlog writes beyond either (bounded memory on imports).
#: A repair holds its successors' vectors until its writes end: the count covers the
#: cascade of a 4e5-artifact memory (~215k successors; a queued version costs a few
#: hundred bytes besides its content), so a large repair does not stall on, and compete
#: with, the vector index halfway through.
BACKLOG_MAX = 250_000
BACKLOG_MAX_CHARS = 128 * 2**20
#: The backlog writes once no version was queued for this long (a burst ends).
BACKLOG_LINGER_S = 0.05
#: Lags (commit to searchable by meaning) a backlog keeps for `lags`, the latest ones.
LAG_SAMPLES = 200_000


@dataclass(frozen=True)
class Pending:
    """A committed live version whose embedding is still to be written."""

    ns: str
    vid: str
    content: str
    #: Its content equals its predecessor's (a successor): the predecessor's vector is
    #: copied inside the graph, with no embedder call.
    reuse: bool = False
    #: When the version committed (`time.monotonic()`), for its lag until searchable.
    at: float = field(default_factory=time.monotonic)


class EmbeddingBacklog:
    """Embeddings of freshly committed versions, written on a background thread just
    after their commit (MEMOREPAIR_RECORD_EMBEDDING=deferred): fresh records, and the
    successors a repair publishes.

    The embedder call and the vector index update were most of a `record` (the index is
    updated inside the commit) and most of a repair's writes; neither decides what is
    served, which the version's own transaction does, so they leave the agent's latency
    path and the repair's window. Until its embedding lands a version is served by uid and
    found by text search, not by vector search: `flush` waits for everything queued so
    far, and every search of this process flushes first, so a process always finds what it
    recorded or republished. A write that fails (the embedder down, a namespace re-embedded
    with another model, the database unreachable) marks the namespace's space stale:
    vector search then refuses until `memorepair reindex`, rather than silently missing
    versions; and the next `flush` raises it, so the caller that waits for the vectors
    (an import, the CLI after a repair) hears it too.
    """

    def __init__(self, store: Store, embedder: Embedder, batch_size: int) -> None:
        self._store = store
        self._embedder = embedder
        #: Versions per write transaction (MEMOREPAIR_EMBEDDING_BATCH): short locks.
        self._batch = batch_size
        self._queue: list[Pending] = []
        self._chars = 0  # content characters in _queue
        self._queued = 0
        self._done = 0
        self._closed = False
        self._flushing = 0
        self._held = 0
        self._last_add = 0.0
        self._lags: deque[float] = deque(maxlen=LAG_SAMPLES)
        self._changed = threading.Condition()
        self._thread: threading.Thread | None = None
        #: The last background failure (the namespaces concerned were marked stale).
        self.error: Exception | None = None
        #: Failures the next `flush` raises: (namespace, cause).
        self._failures: list[tuple[str, Exception]] = []

    def add(self, pending: Sequence[Pending]) -> None:
        """Queue committed versions (waits while the backlog is full: `_full`)."""
        if not pending:
            return
        with self._changed:
            while self._full() and not self._closed:
                self._changed.wait()
            self._queue += pending
            self._chars += sum(len(p.content) for p in pending)
            self._queued += len(pending)
            self._last_add = time.monotonic()
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="memorepair-embeddings", daemon=True
                )
                self._thread.start()
            self._changed.notify_all()

    @property
    def pending(self) -> int:
        """Versions queued and not written yet."""
        with self._changed:
            return self._queued - self._done

    def lags(self) -> list[float]:
        """Seconds from each version's commit to its embedding's commit, for the versions
        written since the last call (the latest LAG_SAMPLES): how long after publication
        a version became findable by meaning."""
        with self._changed:
            taken = list(self._lags)
            self._lags.clear()
        return taken

    @contextmanager
    def held(self) -> Iterator[None]:
        """Hold the writes back while a bulk write runs (they would compete with it for
        the server's cores and the same nodes' locks), unless it is full (`_full`) or
        someone flushes; they start when the last holder leaves."""
        with self._changed:
            self._held += 1
        try:
            yield
        finally:
            with self._changed:
                self._held -= 1
                self._changed.notify_all()

    def flush(self, progress: Callable[[int, int], None] | None = None) -> None:
        """Wait until every version queued before this call has its embedding written;
        `progress(written, of)` hears how far it got about twice a second. Raises
        `EmbeddingError` if a write failed since the last flush (the versions stay served
        without their vectors, and search by meaning refuses until `reindex`)."""
        self._wait(progress)
        if self._failures:
            self._raise_failures()

    def _wait(self, progress: Callable[[int, int], None] | None = None) -> None:
        """Free when nothing is pending (every search flushes): no lock, no wake-up of the
        writer. The two counters only grow, and an `add` that returned before this call
        has already raised `_queued`."""
        if self._done >= self._queued:
            return
        with self._changed:
            target = self._queued
            first = self._done
            self._flushing += 1
            self._changed.notify_all()
            try:
                while self._done < target and self._thread is not None:
                    self._changed.wait(0.5 if progress else None)
                    if progress is not None:
                        progress(min(self._done, target) - first, target - first)
            finally:
                self._flushing -= 1

    def _wait_for_quiet(self) -> None:
        """Write only once writers pause (BACKLOG_LINGER_S without a new version, and no
        bulk write holding it back), so a burst of records never waits on the vector
        index or on these writes' locks; unless it is full (`_full`) or someone waits
        for the queue. Called with the condition held."""
        while not self._waited_for() and not self._full():
            quiet = self._last_add + BACKLOG_LINGER_S - time.monotonic()
            if not self._held and quiet <= 0:
                return
            self._changed.wait(None if self._held else quiet)

    def _full(self) -> bool:
        """BACKLOG_MAX versions or BACKLOG_MAX_CHARS of content queued. Called with the
        condition held."""
        return len(self._queue) >= BACKLOG_MAX or self._chars >= BACKLOG_MAX_CHARS

    def _waited_for(self) -> bool:
        """Someone waits for the queue (a flush or close): write without lingering."""
        return self._flushing > 0 or self._closed

    def discard(self, ns: str) -> None:
        """Wait for what is queued, and forget the failures of namespace `ns` (it is being
        cleared: nothing of it is left to embed)."""
        self._wait()
        with self._changed:
            self._failures = [(n, exc) for n, exc in self._failures if n != ns]

    def _raise_failures(self) -> None:
        with self._changed:
            failures, self._failures = self._failures, []
        if not failures:
            return
        names = ", ".join(repr(ns) for ns in sorted({ns for ns, _ in failures}))
        cause = failures[-1][1]
        raise EmbeddingError(
            f"the embedding writer could not write vectors of namespace {names}: {cause}. "
            "Those versions are served by uid and found by words; search by meaning refuses "
            "until `memorepair reindex` has embedded them (fix the embedder first)"
        ) from cause

    def _failed(self, namespaces: set[str], exc: Exception) -> None:
        """Mark each namespace's space stale and keep the failure for the next flush."""
        self.error = exc
        for ns in sorted(namespaces):
            with self._changed:
                self._failures.append((ns, exc))
            try:
                self._store.write(MARK_SPACE_STALE, ns=ns)
            except Exception:  # the database is gone too: the flush still raises
                continue

    def close(self) -> None:
        """Write what is queued, then stop the thread (a failure stays on record: the
        space is stale; closing does not raise it)."""
        self._wait()
        with self._changed:
            self._closed = True
            self._changed.notify_all()
        if self._thread is not None:
            self._thread.join()

    def _run(self) -> None:
        size = self._batch
        while True:
            with self._changed:
                while not self._queue and not self._closed:
                    self._changed.wait()
                if not self._queue:
                    return
                self._wait_for_quiet()
                batch, self._queue = self._queue[:size], self._queue[size:]
                self._chars -= sum(len(p.content) for p in batch)
                self._changed.notify_all()
            try:
                self._write(batch)
            except Exception as exc:  # a dead writer would hang every flush
                self._failed({p.ns for p in batch}, exc)
            finally:
                written = time.monotonic()
                with self._changed:
                    self._done += len(batch)
                    self._lags.extend(written - p.at for p in batch)
                    self._changed.notify_all()

    def _write(self, batch: list[Pending]) -> None:
        embedder = self._embedder
        for ns in sorted({p.ns for p in batch}):
            try:
                write_embeddings(self._store, embedder, [p for p in batch if p.ns == ns])
            except MemoRepairError as exc:
                self._failed({ns}, exc)


def unindexed(store: Store, ns: str) -> list[Pending]:
    """What a killed process left to its embedding writer in a namespace: served versions
    without their deferred embedding, and the successors of superseded versions still
    holding a vector (the writer copies or drops it). `resume` queues them again."""
    (found,) = store.read(UNINDEXED_VERSIONS, ns=ns)
    return [
        Pending(ns, r["vid"], r["content"], reuse=r["reuse"])
        for r in found["rows"]
        if embeds(json.loads(r["meta"]) if r["meta"] else None)
    ]


def write_embeddings(store: Store, embedder: Embedder, pending: Sequence[Pending]) -> int:
    """Write the embeddings of one namespace's versions in one transaction, in key order
    (as every writer locks heads: no deadlocks), and drop their superseded predecessors'
    vectors. A version marked `reuse` takes its predecessor's vector, copied in the graph;
    the few whose predecessor had none (erased meanwhile, another model) are embedded
    after. Returns how many versions took an embedding."""
    if not pending:
        return 0
    ns = pending[0].ns
    space = Space(embedder.name, embedder.dimension)
    ordered = sorted(pending, key=lambda p: p.vid.rsplit("@", 1)[0])
    fresh = [p for p in ordered if p.content and not p.reuse]
    embedded = embedder.embed([p.content for p in fresh])
    vectors = dict(zip([p.vid for p in fresh], embedded, strict=True))
    rows = [{"vid": p.vid, "embedding": vectors.get(p.vid), "reuse": p.reuse} for p in ordered]
    written, missing = store.transaction(partial(_write_late, ns=ns, space=space, rows=rows))
    if missing:
        wanted = set(missing)
        again = [replace(p, reuse=False) for p in ordered if p.vid in wanted]
        written += write_embeddings(store, embedder, again)
    return written


def _write_late(tx: Tx, ns: str, space: Space, rows: list[dict[str, Any]]) -> tuple[int, list[str]]:
    """Write, then claim the space only if a version took an embedding (a namespace
    cleared meanwhile gets no space node back); a mismatch rolls the writes back."""
    (found,) = tx.run(WRITE_LATE_EMBEDDINGS, rows=rows, model=space.model)
    if found["written"]:
        claim_space(tx, ns, space)
    return int(found["written"]), list(found["missing"])
