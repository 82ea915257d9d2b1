"""Served-only hybrid search: the exact served top-k for the filters, in three modes.

Neo4j 5.26's vector index ranks its whole content first and filters afterwards: with a
filter that keeps 1% of the nodes, "the index's top-10, then drop what is not served"
returns almost nothing, and every repair leaves withdrawn versions in the index. So each
ranking here is built per query by one of three paths, chosen by what the filters keep:

- *index*: the vector index's nearest `fetch` versions, of which only the served ones
  (`Live`) passing the filters count; `fetch` widens (at most `ROUNDS` queries, up to
  `MAX_FETCH`) until `k` pass. An index answer shorter than `fetch` is never taken as
  "nothing more" (the index is approximate and has answered short under churn): the
  exact path (*all*) answers instead.
- *scan*: when fewer than `SCAN_RATE` of the index's first answer passed, the filtered
  set is probably small: the versions that can pass the filters are found through the
  full-text index's filter fields (namespace, kind, meta terms), at most `SCAN_CAP`; if
  that set is complete it is scored exactly (cosine) and the answer is exact.
- *all*: otherwise every served version of the namespace (of the kinds asked) is scored
  exactly: slower, never incomplete.

Full-text ranking (BM25) filters namespace, kind and meta inside Lucene with zero-boost
clauses, so its ranking is already that of the filtered set; only served-ness and the
exact filter values are checked after it, widening the same way. `hybrid` fuses the two
rankings, each `DEPTH` times k deep, by their scores, not only their ranks: a convex
combination `TEXT_WEIGHT * bm25 / max(bm25) + (1 - TEXT_WEIGHT) * (cos - min) / (max - min)`
over each ranking's own list (a version missing from a list scores 0 there). Rank fusion
(RRF) threw the evidence of the scores away: a weak vector ranking pulled strong text hits
down (docs/decisions.md, decision 19, measured with `python -m bench.retrieval`).
The two first rounds of `hybrid` run as one statement (each widened alone after it if it
fell short). Every query checks `Live`, so no withdrawn, staged, superseded or removed version is
ever returned, whatever the mode, and a query is refused unless its embedder is the one
the namespace's embeddings were made with.
"""

from __future__ import annotations

import math
import re
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

from memorepair import queries
from memorepair.embedding import GET_SPACE, Embedder, meta_value
from memorepair.errors import DatabaseError, EmbeddingError, InputError
from memorepair.model import Kind, artifact_key, pin
from memorepair.queries import Query
from memorepair.store import Row, Store

AWAIT_TEXT_INDEX = queries.named("serving/search/await_text_index")
SEARCH_HYBRID_INDEX = queries.named("serving/search/search_hybrid_index")
SEARCH_RELATED = queries.named("serving/search/search_related")
SEARCH_TEXT = queries.named("serving/search/search_text")
SEARCH_TEXT_ALL = queries.named("serving/search/search_text_all")
SEARCH_VECTOR_ALL = queries.named("serving/search/search_vector_all")
SEARCH_VECTOR_INDEX = queries.named("serving/search/search_vector_index")
SEARCH_VECTOR_SCAN = queries.named("serving/search/search_vector_scan")

Mode = Literal["hybrid", "vector", "text"]
MODES: tuple[Mode, ...] = ("hybrid", "vector", "text")

#: The text ranking's share of a hybrid score (the vector ranking has the rest): the best
#: of 0.5-0.8 on `bench.retrieval` with the offline embedder (docs/decisions.md, 18).
TEXT_WEIGHT = 0.7
#: Each mode's ranking is fused this many times k deep.
DEPTH = 5
#: Largest filtered set the scan path scores exactly (about 25 us per version here).
SCAN_CAP = 2000
#: The scan is tried when fewer than this share of the index's first answer passed.
SCAN_RATE = 0.05
#: The vector index path's first fetch: at least MIN_FETCH, and FIRST_FETCH * k when
#: filters narrow the set (NARROWED_FETCH * k), then widened only when fewer than k passed.
#: The index is approximate (HNSW: Lucene searches as wide as it is asked): on 1e4
#: docstring embeddings its top-10 recall was 0.87 asked for 10, 0.98 for 50, 0.996 for
#: 100 (m 32, ef_construction 200; decision 19), so even k = 10 asks for 100.
FIRST_FETCH = 2
NARROWED_FETCH = 10
MIN_FETCH = 100
#: The full-text path's first fetch: Lucene is exact and filters inside the index, so only
#: versions that stopped being served meanwhile fall out: k plus this share, then widened.
TEXT_MARGIN = 0.2
MAX_FETCH = 4000
ROUNDS = 3
#: Query words sent to Lucene (a longer query is cut; its embedding uses all of it).
MAX_TERMS = 64
MAX_K = 1000

_WORD = re.compile(r"\w+", re.UNICODE)


@dataclass(frozen=True)
class Hit:
    """One served version: pin `uid@version` to read exactly what was ranked.

    `ranks` holds its 1-based rank in each mode that ranked it (None where it was not in
    that mode's top); `score` is the mode's own (cosine in [0, 1], BM25, or the hybrid's
    fused score in [0, 1]).
    `related_to` is set on a neighbour reached over RELATED from that hit.
    """

    uid: str
    version: int
    kind: str
    score: float | None
    ranks: dict[str, int | None]
    content: str
    related_to: str | None = None

    @property
    def pin(self) -> str:
        """`uid@version`: cite it as an input to say which version was read."""
        return pin(self.uid, self.version)

    def as_dict(self) -> dict[str, Any]:
        return {
            "uid": self.uid,
            "version": self.version,
            "kind": self.kind,
            "score": self.score,
            "ranks": dict(self.ranks),
            "content": self.content,
            "related_to": self.related_to,
        }


@dataclass(frozen=True)
class Filters:
    """What a hit must satisfy besides being served: checked exactly in every path."""

    ns: str
    kinds: tuple[str, ...] | None = None
    meta: tuple[str, ...] = ()
    since: datetime | None = None
    until: datetime | None = None
    #: Only uids starting with this (the LangGraph store's namespace paths).
    prefix: str | None = None

    def params(self) -> dict[str, Any]:
        return {
            "ns": self.ns,
            "kinds": list(self.kinds) if self.kinds else None,
            "meta": list(self.meta),
            "since": self.since,
            "until": self.until,
            "prefix": self.prefix,
        }

    @property
    def narrowed(self) -> bool:
        """Anything beyond the namespace: the filtered set may be small."""
        return bool(self.kinds or self.meta or self.since or self.until or self.prefix)


@dataclass
class Ranking:
    """One mode's ranking, with the path that produced it (for benchmarks and --debug)."""

    rows: list[Row]
    path: str
    queries: int = 0


def filters(
    ns: str,
    *,
    kinds: Sequence[str] | None,
    meta: Mapping[str, Any] | None,
    since: datetime | str | None,
    until: datetime | str | None,
    searchable: Sequence[str],
    prefix: str | None = None,
) -> Filters:
    """Validated filters; a meta field settings do not make searchable is refused."""
    if kinds is not None:
        unknown = [k for k in kinds if k not in {kind.value for kind in Kind}]
        if unknown:
            raise InputError(f"unknown kinds {unknown}; use {[k.value for k in Kind]}")
    terms: list[str] = []
    for key, value in (meta or {}).items():
        if key not in searchable:
            raise InputError(
                f"meta field {key!r} is not searchable; add it to MEMOREPAIR_SEARCH_META_FIELDS "
                f"(now {list(searchable)}) and run `memorepair reindex`"
            )
        text = meta_value(value)
        if text is None:
            raise InputError(f"meta filter {key!r}: a string, number or boolean, got {value!r}")
        terms.append(f"{key}={text}")
    return Filters(
        ns,
        tuple(sorted(set(kinds))) if kinds else None,
        tuple(sorted(set(terms))),
        _instant("since", since),
        _instant("until", until),
        prefix or None,
    )


def _instant(name: str, value: datetime | str | None) -> datetime | None:
    if value is None:
        return None
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value)
        except ValueError as exc:
            raise InputError(f"{name}: not an ISO 8601 time: {value!r}") from exc
    return value if value.tzinfo else value.replace(tzinfo=UTC)


# ---- Lucene query text (values are escaped; the query itself is a parameter) -------------
def _phrase(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def lucene_filter(f: Filters) -> str:
    """Zero-boost clauses that keep the namespace, kinds and meta terms (a superset: the
    analyzer may split values; the queries then check the exact values)."""
    clauses = [f"+ns:{_phrase(f.ns)}^0"]
    if f.kinds:
        clauses.append("+kind:(" + " ".join(_phrase(k) for k in f.kinds) + ")^0")
    clauses += [f"+meta_terms:{_phrase(term)}^0" for term in f.meta]
    return " ".join(clauses)


def lucene_text(text: str, f: Filters) -> str | None:
    """The text query: any of its words in content or meta terms, within the filters.
    Words are lower-cased, so none reads as an operator (AND, OR, NOT)."""
    words = _WORD.findall(text.lower())[:MAX_TERMS]
    if not words:
        return None
    terms = " ".join(words)
    return f"+(content:({terms}) meta_terms:({terms})) {lucene_filter(f)}"


# ---- strategy (pure) ------------------------------------------------------------------------
def first_fetch(k: int, narrowed: bool = False, least: int = MIN_FETCH) -> int:
    """The vector index's first fetch for k hits: at least `least` (the index's width for a
    top 10 it holds almost exactly), more when filters narrow the set."""
    return min(MAX_FETCH, max(least, (NARROWED_FETCH if narrowed else FIRST_FETCH) * k))


def first_text_fetch(k: int) -> int:
    """Lucene's first fetch for k hits: exact and filtered in the index, so barely more."""
    return min(MAX_FETCH, k + max(1, math.ceil(TEXT_MARGIN * k)))


def widen(k: int, fetch: int, passed: int) -> int:
    """The next fetch after `passed` of `fetch` passed: enough for k at the observed pass
    rate with a 1.5x margin, at least four times the last, at most MAX_FETCH."""
    rate = (passed + 1) / (fetch + 1)
    wanted = math.ceil(1.5 * k / rate)
    return min(MAX_FETCH, max(4 * fetch, wanted))


def normalised(mode: str, rows: Sequence[Row]) -> list[float]:
    """Each row's score on [0, 1] within its own list: BM25 over the list's best (BM25 has
    no fixed scale, but 0 means no evidence), cosine min-max (cosines of one model crowd a
    narrow band, so its spread is what tells them apart)."""
    values = [float(row["score"]) for row in rows]
    if not values:
        return []
    low = min(values) if mode == "vector" else 0.0
    span = max(values) - low
    return [(v - low) / span if span > 0 else 1.0 for v in values]


def fuse(rankings: Mapping[str, Sequence[Row]], k: int) -> list[Hit]:
    """Convex fusion: score = TEXT_WEIGHT * text + (1 - TEXT_WEIGHT) * vector, each the
    version's normalised score in that mode's list (0 where it is absent)."""
    weights = {"text": TEXT_WEIGHT, "vector": 1.0 - TEXT_WEIGHT}
    merged: dict[str, Row] = {}
    ranks: dict[str, dict[str, int | None]] = {}
    scores: dict[str, float] = {}
    for mode, rows in rankings.items():
        for rank, (row, score) in enumerate(zip(rows, normalised(mode, rows), strict=True), 1):
            uid = row["uid"]
            merged.setdefault(uid, row)
            ranks.setdefault(uid, {m: None for m in rankings})[mode] = rank
            scores[uid] = scores.get(uid, 0.0) + weights[mode] * score
    order = sorted(merged, key=lambda uid: (-scores[uid], uid))[:k]
    return [_hit(merged[uid], scores[uid], ranks[uid]) for uid in order]


def _hit(row: Row, score: float | None, ranks: dict[str, int | None]) -> Hit:
    return Hit(
        uid=row["uid"],
        version=int(row["version"]),
        kind=row["kind"],
        score=score,
        ranks=ranks,
        content=row.get("content") or "",
        related_to=row.get("related_to"),
    )


# ---- running a search -----------------------------------------------------------------------
class Searcher:
    """Runs searches for one store; hybrid asks both indexes in one statement."""

    def __init__(
        self,
        store: Store,
        embedder: Embedder | None,
        *,
        min_fetch: int = MIN_FETCH,
        index_query: Query = SEARCH_VECTOR_INDEX,
        hybrid_query: Query = SEARCH_HYBRID_INDEX,
    ) -> None:
        self.store = store
        #: The store's embedder; None: embeddings are off, and only `text` search runs.
        self._embedder = embedder
        #: The vector index's least first fetch (MEMOREPAIR_SEARCH_VECTOR_FETCH).
        self.min_fetch = min_fetch
        #: The vector index path's statements (alone, and with the text path's first round);
        #: a test hands in ones whose index answers short.
        self._index_query = index_query
        self._hybrid_query = hybrid_query
        #: `store.writes` when the full-text index was last awaited (-1: never).
        self._text_synced = -1
        self._text_lock = threading.Lock()

    def sync_text(self) -> None:
        """Await the eventually consistent full-text index if this process has written
        since it last did: its searches see every write it made, and an idle process pays
        nothing. (Another process's writes show up once Lucene has refreshed, within a
        second; served-ness never depends on it, every query checks `Live`.)"""
        with self._text_lock:
            writes = self.store.writes
            if writes != self._text_synced:
                self.store.serve(AWAIT_TEXT_INDEX)
                self._text_synced = writes

    @property
    def embedder(self) -> Embedder:
        if self._embedder is None:
            raise EmbeddingError(
                "embeddings are off (MEMOREPAIR_EMBEDDINGS=false): search with mode "
                "'text', or turn them on and run `memorepair reindex`"
            )
        return self._embedder

    def close(self) -> None:
        """Nothing to release (the store's driver is the store's); kept for callers."""

    def search(self, text: str, k: int, f: Filters, mode: Mode, related: bool = False) -> list[Hit]:
        if mode not in MODES:
            raise InputError(f"mode must be one of {list(MODES)}, got {mode!r}")
        if not 1 <= k <= MAX_K:
            raise InputError(f"k must be between 1 and {MAX_K}, got {k}")
        if mode == "vector":
            rows = self.vector(text, k, f).rows
            hits = [_hit(r, r["score"], {"vector": n}) for n, r in enumerate(rows, start=1)]
        elif mode == "text":
            rows = self.text(text, k, f).rows
            hits = [_hit(r, r["score"], {"text": n}) for n, r in enumerate(rows, start=1)]
        else:
            hits = fuse(self.hybrid(text, DEPTH * k, f), k)
        return hits + self._related(hits, f) if related else hits

    def hybrid(self, text: str, depth: int, f: Filters) -> dict[str, list[Row]]:
        """Both rankings, `depth` deep. Their first rounds run as one statement (one round
        trip: on a busy server two concurrent queries were slower than the two in a row,
        bench.search); a ranking that fell short goes on alone, exactly as in its mode."""
        embedder = self.embedder  # refuse before asking anything
        lucene = lucene_text(text, f)
        if lucene is None:  # no words: the vector ranking alone
            return {"vector": self.vector(text, depth, f, embedder).rows, "text": []}
        self.sync_text()
        (vector,) = embedder.embed([text])
        try:
            (found,) = self.store.serve(
                self._hybrid_query,
                **f.params(),
                vector=vector,
                model=embedder.name,
                k=depth,
                fetch=first_fetch(depth, f.narrowed, self.min_fetch),
                lucene=lucene,
                text_fetch=first_text_fetch(depth),
            )
        except DatabaseError as exc:  # the vector index is missing: each ranking alone
            if not _index_unavailable(exc):
                raise
            found = None
        lexical = (
            {"returned": found["text_returned"], "hits": found["text_hits"]} if found else None
        )
        return {
            "vector": self.vector(text, depth, f, embedder, first=found, vector=vector).rows,
            "text": self.text(text, depth, f, first=lexical).rows,
        }

    # ---- vector ranking ----
    def vector(
        self,
        text: str,
        k: int,
        f: Filters,
        embedder: Embedder | None = None,
        *,
        first: Row | None = None,
        vector: list[float] | None = None,
    ) -> Ranking:
        """The vector ranking; `first` is the index path's first answer when the caller
        already has it (hybrid's statement), for `vector`, the query's embedding."""
        embedder = embedder or self.embedder
        if vector is None:
            (vector,) = embedder.embed([text])
        fixed = {**f.params(), "vector": vector, "model": embedder.name, "k": k}
        given = [first] if first is not None else []

        def run(fetch: int) -> Row:
            if given:
                found = given.pop()
            else:
                (found,) = self.store.serve(self._index_query, fetch=fetch, **fixed)
            self._check_space(found, embedder, f.ns)
            if found["rebuilding"]:
                raise _Rebuilding
            return found

        def scan() -> Ranking | None:
            self.sync_text()
            (found,) = self.store.serve(
                SEARCH_VECTOR_SCAN, filter=lucene_filter(f), cap=SCAN_CAP, **fixed
            )
            if found["returned"] >= SCAN_CAP:
                return None  # too many to score exactly: widen the index path instead
            return Ranking(found["hits"], f"scan:{found['returned']}", 2)

        try:
            ranking, tried = _widened(
                run,
                k,
                first_fetch(k, f.narrowed, self.min_fetch),
                "index",
                scan,
                short_is_all=False,
            )
        except _Rebuilding:  # `reindex --compact` rebuilds the index: be exact meanwhile
            ranking, tried = None, "index:unavailable"
        except DatabaseError as exc:  # dropped or not online outside a compaction
            if not _index_unavailable(exc):
                raise
            ranking, tried = None, "index:unavailable"
        if ranking is None:  # the exact path: every served version that passes, scored
            (found,) = self.store.serve(SEARCH_VECTOR_ALL, **fixed)
            self._check_space(found, embedder, f.ns)
            ranking = Ranking(found["hits"], f"{tried}>all", ROUNDS + 2)
        return ranking

    def _check_space(self, found: Row, embedder: Embedder, ns: str) -> None:
        """Refuse a query whose model is not the namespace's (or while it is re-embedded)."""
        model, dimension, state = found.get("model"), found.get("dimension"), found.get("state")
        if model is None:
            (space,) = self.store.serve(GET_SPACE, ns=ns)
            if space["serves"]:
                raise EmbeddingError(
                    f"namespace {ns!r} has served versions but no embeddings "
                    "(recorded before search existed): run `memorepair reindex`"
                )
            return
        if state == "reindexing":
            raise EmbeddingError(
                f"namespace {ns!r} is being re-embedded with {model}; search "
                "again once `memorepair reindex` has finished"
            )
        if state == "stale":
            raise EmbeddingError(
                f"namespace {ns!r} has versions written with embeddings off: "
                "run `memorepair reindex`"
            )
        if model != embedder.name or dimension != embedder.dimension:
            raise EmbeddingError(
                f"namespace {ns!r} is embedded with {model} (dimension "
                f"{dimension}) but this query uses {embedder.name} (dimension "
                f"{embedder.dimension}): configure that model again, or run "
                "`memorepair reindex` to re-embed the namespace with the new one"
            )

    # ---- text ranking ----
    def text(self, text: str, k: int, f: Filters, *, first: Row | None = None) -> Ranking:
        """The full-text ranking; `first` is its first answer when the caller has it."""
        query = lucene_text(text, f)
        if query is None:
            return Ranking([], "empty", 0)
        self.sync_text()
        fixed = {**f.params(), "lucene": query, "k": k}
        given = [first] if first is not None else []

        def run(fetch: int) -> Row:
            if given:
                return given.pop()
            (found,) = self.store.serve(SEARCH_TEXT, fetch=fetch, **fixed)
            return found

        ranking, tried = _widened(run, k, first_text_fetch(k), "index")
        if ranking is None:
            (found,) = self.store.serve(SEARCH_TEXT_ALL, **fixed)
            ranking = Ranking(found["hits"], f"{tried}>all", ROUNDS + 1)
        return ranking

    # ---- neighbours ----
    def _related(self, hits: Sequence[Hit], f: Filters) -> list[Hit]:
        seen = {h.uid for h in hits}
        keys = [artifact_key(f.ns, h.uid) for h in hits]
        out: list[Hit] = []
        for row in self.store.serve(SEARCH_RELATED, keys=keys, **f.params()):
            if row["uid"] in seen:
                continue
            seen.add(row["uid"])
            out.append(_hit(row, None, {}))
        return out


class _Rebuilding(Exception):
    """`reindex --compact` is rebuilding the vector index."""


def _index_unavailable(exc: DatabaseError) -> bool:
    """The vector index is missing or not online (dropped by hand, or still populating)."""
    text = str(exc)
    return "artifact_embedding" in text or "online" in text.lower()


def _widened(
    run: Callable[[int], Row],
    k: int,
    fetch: int,
    name: str,
    scan: Callable[[], Ranking | None] | None = None,
    *,
    short_is_all: bool = True,
) -> tuple[Ranking | None, str]:
    """Ask for more until k pass or nothing more exists; None after ROUNDS without.

    Returns the ranking (or None) and the path tried, e.g. ``index:100>scan:capped>400``.

    When fewer than SCAN_RATE of the first fetch passed, the filtered set is probably
    small: `scan` scores it exactly if it is small enough (else the widening goes on).

    An answer shorter than asked means "nothing more" only where the index is exact
    (`short_is_all`: Lucene). Neo4j's vector index is not: under churn it has answered 67
    rows for every fetch while 10,070 versions were embedded, and trusting that turned
    vector search into "nothing matches" and hybrid into words only. There a short answer
    gives None (``index:100>short:67``), so the caller takes its exact path.
    """
    steps: list[str] = []
    for round_ in range(1, ROUNDS + 1):
        found = run(fetch)
        steps.append(str(fetch))
        passed = len(found["hits"])
        short = found["returned"] < fetch
        if short and not short_is_all:
            steps.append(f"short:{found['returned']}")
            break
        if passed >= k or short:
            return Ranking(found["hits"], f"{name}:{'>'.join(steps)}", round_), ""
        if round_ == 1 and scan is not None and (passed + 1) / (fetch + 1) < SCAN_RATE:
            scanned = scan()
            if scanned is not None:
                scanned.path = f"{name}:{fetch}>{scanned.path}"
                return scanned, ""
            steps.append("scan:capped")
        if fetch >= MAX_FETCH:
            break
        fetch = widen(k, fetch, passed)
    return None, f"{name}:{'>'.join(steps)}"
