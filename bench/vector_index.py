"""The vector index's shape against its recall and speed (prints tables; asserts nothing):
``python -m bench.vector_index``.

Neo4j's vector index is Lucene's HNSW graph, approximate: a query asked for its k nearest
searches as wide as k (Neo4j 5.26; from 2026.x, k times the index's
``vector.default_search_expansion_factor``), so the share of the exact top 10 it returns
grows with the fetch, and with how well the graph was built (``vector.hnsw.m``, the links
per node, and ``vector.hnsw.ef_construction``, the width of the search that picks them).

The memory is ``bench.search``'s (docstring passages of the standard library and the
installed packages, with its share of near-duplicate caches), imported once. Then, for
each ``--shapes`` entry ``m:ef_construction[:factor]``, the index is dropped and built
again in one bulk population with that configuration (``memorepair reindex --compact``
with ``MEMOREPAIR_SEARCH_HNSW_M`` and ``_EF_CONSTRUCTION`` set so; the time it took is
printed), and the held-out queries run interleaved: Neo4j's raw ``db.index.vector.queryNodes`` at
k 10 / 20 / 50 / 70 / 100 (recall of the exact top 10 in its first 10, against a numpy
scan of the same vectors), and the engine's ``vector`` mode (unfiltered, as ``memorepair
search`` runs it) with each least first fetch of ``--fetches``
(``MEMOREPAIR_SEARCH_VECTOR_FETCH``), with its recall@10 (tie-aware, as ``bench.search``).
Each query runs ``--repeat`` times in a row and the fastest counts (other work on the
machine only adds to a query's time), and each query starts the round at another step
(none is always the first, cold one).
The schema's own index is built again at the end. Read the ratios within one table: 2
cores shared with other work (the load average is printed).

Run against the configured Neo4j (``MEMOREPAIR_*``), on a database holding little else
(the index spans every namespace).
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from threadpoolctl import threadpool_limits

from bench import args as bench_args
from bench.search import META_FIELDS, K, Truth, _load, _pct, _query, cascade_memory, corpus, recall
from memorepair.api import MemoryStore, embedder_for, open_store
from memorepair.settings import Settings, load_settings

CREATE_EXPANDED = _query("create_expanded_vector_index")
DROP_VECTOR_INDEX = _query("drop_search_indexes")
AWAIT_VECTOR_INDEX = _query("await_vector_index")
RAW_VECTOR = _query("raw_vector")
SHOW_VECTOR_INDEX = _query("show_vector_index")

FETCHES = (10, 20, 50, 70, 100)


@dataclass(frozen=True)
class Shape:
    m: int
    ef_construction: int
    factor: float | None = None  # Neo4j 2026.x only: the index's search expansion factor

    @classmethod
    def parse(cls, text: str) -> Shape:
        parts = text.split(":")
        if len(parts) not in (2, 3):
            raise SystemExit(f"--shapes: m:ef_construction[:factor], got {text!r}")
        factor = float(parts[2]) if len(parts) == 3 else None
        return cls(int(parts[0]), int(parts[1]), factor)

    def __str__(self) -> str:
        tail = f" factor {self.factor:g}" if self.factor is not None else ""
        return f"m {self.m} ef_construction {self.ef_construction}{tail}"


def build(memory: MemoryStore, settings: Settings, shape: Shape) -> float:
    """Build the vector index again with `shape`: through `reindex --compact` with the
    shape's settings, or (with a factor) by the bench's own statement; its seconds."""
    if shape.factor is None:
        shaped = settings.model_copy(
            update={"search_hnsw_m": shape.m, "search_hnsw_ef_construction": shape.ef_construction}
        )
        with open_store(ns=memory.ns, settings=shaped) as other:
            return other.compact_vector_index()
    store = memory.store
    started = time.perf_counter()
    store.write(DROP_VECTOR_INDEX)
    store.write(
        CREATE_EXPANDED, m=shape.m, ef_construction=shape.ef_construction, factor=shape.factor
    )
    store.read(AWAIT_VECTOR_INDEX)
    return time.perf_counter() - started


def measure(
    memory: MemoryStore,
    truth: Truth,
    qs: Sequence[str],
    qvs: np.ndarray,
    modes: dict[int, MemoryStore],
    repeat: int = 1,
) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    """Per query, interleaved (in turn, each query starting at another): raw queryNodes at
    each fetch, and the `vector` mode with each least first fetch of `modes`."""
    seconds: dict[str, list[float]] = {f"raw k {fetch}": [] for fetch in FETCHES}
    seconds |= {f"vector f{fetch}": [] for fetch in modes}
    recalls: dict[str, list[float]] = {}

    def timed(name: str, run: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        best = math.inf
        for _ in range(repeat):  # the fastest of `repeat`: other tenants' load only adds
            started = time.perf_counter()
            found = run(*args, **kwargs)
            best = min(best, time.perf_counter() - started)
        seconds[name].append(best)
        return found

    def raw(fetch: int, query: str, qv: np.ndarray, exact: set[str]) -> None:
        name = f"raw k {fetch}"
        rows = timed(name, memory.store.serve, RAW_VECTOR, k=fetch, vector=qv.tolist())
        top = [row["uid"] for row in rows][:K]
        recalls.setdefault(name, []).append(len(set(top) & exact) / K)

    def mode(fetch: int, query: str, qv: np.ndarray, exact: set[str]) -> None:
        name = f"vector f{fetch}"
        hits = timed(name, modes[fetch].search, query, K, mode="vector", record_use=False)
        got = [(h.uid, h.score or 0.0) for h in hits]
        recalls.setdefault(name, []).append(recall(truth, "vector", query, qv, {}, got))

    steps = [(raw, fetch) for fetch in FETCHES] + [(mode, fetch) for fetch in modes]
    for qi, (query, qv) in enumerate(zip(qs, qvs, strict=True)):
        exact = set(truth.vector(query, qv, {}, K))
        turn = qi % len(steps)  # each query starts elsewhere: none is always the cold one
        for step, fetch in steps[turn:] + steps[:turn]:
            step(fetch, query, qv, exact)
    return seconds, recalls


def report(shape: Shape, built_s: float, seconds: dict[str, list[float]], recalls: Any) -> None:
    floor = _pct(seconds["raw k 10"], 0.5)
    print(f"\n{shape}: built in {built_s:.1f}s ({_load()})")
    print(f"{'query':<12} {'p50 ms':>8} {'p99 ms':>8} {'recall@10':>10} {'p50 / raw k 10':>15}")
    for name, values in seconds.items():
        p50 = _pct(values, 0.5)
        mean = statistics.fmean(recalls[name])
        print(
            f"{name:<12} {p50:>8.1f} {_pct(values, 0.99):>8.1f} {mean:>10.3f} {p50 / floor:>14.2f}x"
        )


def main(argv: list[str] | None = None) -> int:
    # One BLAS thread: OpenBLAS's threads spin after each product (the exact top 10 of
    # every query), taking the 2 cores from the queries measured next.
    with threadpool_limits(limits=1, user_api="blas"):
        return _main(argv)


def _main(argv: list[str] | None) -> int:
    parser = bench_args.parser("python -m bench.vector_index", __doc__)
    parser.add_argument("--size", type=float, default=1e4, help="artifacts (default: 1e4)")
    parser.add_argument(
        "--shapes",
        default="16:100,32:200,64:400",
        help="m:ef_construction[:factor] each (default: %(default)s; the factor needs 2026.x)",
    )
    parser.add_argument("--queries", type=int, default=100, help="queries (default: 100)")
    parser.add_argument(
        "--repeat",
        type=int,
        default=3,
        help="runs of each query, the fastest kept (default: %(default)s)",
    )
    parser.add_argument(
        "--fetches",
        default="50,70,100",
        help="the vector mode's least first fetches (MEMOREPAIR_SEARCH_VECTOR_FETCH), each "
        "measured (default: %(default)s)",
    )
    parser.add_argument("--cascade", type=float, default=1e4, help="as bench.search (1e4)")
    args = parser.parse_args(argv)
    shapes = [Shape.parse(s) for s in args.shapes.split(",")]
    n = int(args.size)
    settings = load_settings(search_meta_fields=META_FIELDS)
    texts = corpus(settings.state_dir)
    if len(texts) < n + args.queries:
        texts = texts + [f"{t} (variant {k})" for k in range(1, 3) for t in texts]
    qs = [" ".join(t.split()[:8]) for t in texts[n : n + args.queries]]
    items = cascade_memory(texts, n, min(int(args.cascade), n // 2))
    embedder = embedder_for(settings)
    with open_store(ns=f"vector-index-{n}", settings=settings) as memory:
        print(f"bench vector_index: {n} artifacts, server {memory.store.verify()}, {_load()}")
        memory.apply_schema()
        memory.clear()
        matrix = np.array(embedder.embed([a.content for a in items]), dtype=np.float32)
        memory.import_items(items)
        memory.flush_embeddings()
        uids = [a.uid for a in items]
        truth = Truth(memory, uids, matrix, [dict(a.meta) for a in items], np.ones(n, bool))
        qvs = np.array(embedder.embed(qs), dtype=np.float32)
        modes = {
            fetch: memory.__class__(
                memory.store,
                memory.ns,
                memory.registry,
                settings.model_copy(update={"search_vector_fetch": fetch}),
                embedder=memory.embedder,
            )
            for fetch in (int(f) for f in args.fetches.split(","))
        }
        try:
            for shape in shapes:
                built_s = build(memory, settings, shape)
                print(f"index options: {memory.store.read(SHOW_VECTOR_INDEX)[0]['config']}")
                measure(memory, truth, qs[:10], qvs[:10], modes)  # warm-up
                seconds, recalls = measure(memory, truth, qs, qvs, modes, args.repeat)
                report(shape, built_s, seconds, recalls)
        finally:
            memory.clear()
            memory.compact_vector_index()  # the settings' own shape again
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
