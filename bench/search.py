"""Search figures (prints tables; asserts nothing): ``python -m bench.search``.

The corpus is real English technical text built offline: the paragraphs and sentences of
the docstrings of the running interpreter's standard library and of the packages installed
in its environment (parsed with ``ast``, never imported), and the language reference's help
topics (``pydoc_data``); cached in ``<state dir>/bench/search-corpus.json``. Queries are the first
eight words of texts held out of the memory. Two sections, each selectable with ``--only``:

``overhead``  the repair's end-to-end time with embeddings vs without, on a
              ``--cascade``-artifact cascade (a root record and caches that replay it
              with ``text.join``; one ``correct`` of the root recomputes every cache):
              *without* is the engine before search (embeddings off and both search
              indexes dropped), *with* is the default. It drops and re-creates the
              search indexes, so run it on a database holding little else.
``search``    for each ``--sizes``: the memory is imported (embedding throughput on
              record: artifacts/s of the import, and texts/s of the embedder alone); then
              p50/p99 latency per mode and recall@10 against an exact brute-force ranking
              of the served set (numpy cosine over the same embeddings; Lucene without
              bound for text; their fusion for hybrid), with no filter and with meta filters
              keeping 10% and 1%; idle (then the same searches with use recording off
              and on, alternating rounds, and the time of one flush), then while a
              cascade of ``--cascade`` artifacts (at most half the memory) of the same
              namespace is repaired (the queries
              between its barrier and its publication, scored once the repair is over
              against the served set of that window, so text scores are those of the
              index after publication; any withdrawn version of the cascade after the
              barrier, or any successor before publication, in any answer is counted as
              a violation). Embedding throughput on publication: the repair's successors
              per second of its execution phase (build, embed, stage), and the embedder
              alone on their texts.

Run against the configured Neo4j (``MEMOREPAIR_*``); figures depend on the machine's load,
which is printed with them.
"""

from __future__ import annotations

import ast
import json
import os
import re
import statistics
import sysconfig
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from threadpoolctl import threadpool_limits

from bench import args as bench_args
from memorepair import queries
from memorepair.api import MemoryStore, embedder_for, open_store
from memorepair.model import ArtifactIn, Kind, Recipe
from memorepair.queries import Query
from memorepair.serving.search import DEPTH, Filters, fuse, lucene_text
from memorepair.settings import Settings, load_settings

BENCH_CYPHER = Path(__file__).resolve().parent / "cypher"


def _query(name: str) -> Query:
    return queries.named(name, root=BENCH_CYPHER, label="bench/cypher")


SEARCH_TEXT_EXACT = _query("search_text_exact")
DROP_SEARCH_INDEXES = _query("drop_search_indexes")
DROP_TEXT_INDEX = _query("drop_text_index")
AWAIT_INDEXES = _query("await_indexes")
RAW_VECTOR = _query("raw_vector")
RAW_TEXT = _query("raw_text")

MODES = ("hybrid", "vector", "text")
#: Filters by share of the memory they keep: meta `band` has 10 values, `topic` 100.
FILTERS: dict[str, Callable[[int], dict[str, str]]] = {
    "none": lambda q: {},
    "10%": lambda q: {"band": f"b{q % 10}"},
    "1%": lambda q: {"topic": f"t{q % 100}"},
}
META_FIELDS = ["topic", "band"]
K = 10


# ---- corpus -----------------------------------------------------------------------------
def _docstring_paragraphs(path: Path) -> list[str]:
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (SyntaxError, UnicodeDecodeError, ValueError):
        return []
    out: list[str] = []
    kinds = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Module)
    for node in ast.walk(tree):
        doc = ast.get_docstring(node) if isinstance(node, kinds) else None
        for para in (doc or "").split("\n\n"):
            text = " ".join(para.split())
            if 50 <= len(text) <= 1500 and sum(c.isalpha() for c in text) > 0.6 * len(text):
                out.append(text)
    return out


def corpus(state_dir: Path) -> list[str]:
    """Distinct docstring paragraphs of the stdlib and of the packages installed in this
    environment, the language reference's help topics, then their sentences (cached)."""
    cache = state_dir / "bench" / "search-corpus.json"
    if cache.is_file():
        cached: list[str] = json.loads(cache.read_text(encoding="utf-8"))
        return cached
    skip = {"test", "tests", "idle_test", "testing", "site-packages"}
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    files = sorted(p for p in stdlib.rglob("*.py") if not skip & set(p.parts))
    installed = Path(sysconfig.get_paths()["purelib"])  # the environment's own packages
    files += sorted(
        p for p in installed.rglob("*.py") if not skip & set(p.relative_to(installed).parts)
    )
    with ProcessPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        found = list(pool.map(_docstring_paragraphs, files, chunksize=50))
    from pydoc_data.topics import topics  # the language reference's help topics

    paras = [p for found_in in found for p in found_in]
    for text in topics.values():
        paras += [" ".join(p.split()) for p in text.split("\n\n") if len(p.split()) >= 8]
    texts = list(dict.fromkeys(paras))
    seen = set(texts)
    for para in list(texts):
        for sentence in re.split(r"(?<=[.!?])\s+", para):
            if len(sentence) >= 40 and sentence not in seen:
                seen.add(sentence)
                texts.append(sentence)
    cache.parent.mkdir(parents=True, exist_ok=True)
    cache.write_text(json.dumps(texts), encoding="utf-8")
    return texts


def _meta(i: int) -> dict[str, str]:
    return {"topic": f"t{i % 100}", "band": f"b{i % 10}"}


def cascade_memory(texts: Sequence[str], n: int, cascade: int) -> list[ArtifactIn]:
    """`n` artifacts: one root record, `cascade` caches replaying (record j, root) with
    text.join, the rest records and summaries, each the text of one docstring passage."""
    recipe = Recipe(executor="text.join", args={"sep": " "})
    items = [ArtifactIn(uid="root", kind=Kind.RECORD, content=texts[0], meta=_meta(0))]
    plain = n - 1 - cascade
    for i in range(1, plain + 1):
        kind = Kind.SUMMARY if i % 3 == 0 else Kind.RECORD
        items.append(ArtifactIn(uid=f"r-{i}", kind=kind, content=texts[i], meta=_meta(i)))
    for j in range(cascade):
        source = 1 + j % plain
        items.append(
            ArtifactIn(
                uid=f"c-{j}",
                kind=Kind.CACHE,
                content=f"{texts[source]} {texts[0]}",
                recipe=recipe,
                inputs=[f"r-{source}", "root"],
                meta=_meta(plain + 1 + j),
            )
        )
    return items


# ---- measuring ----------------------------------------------------------------------------
def _pct(values: Sequence[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p * len(ordered)))] * 1e3 if ordered else float("nan")


def _load() -> str:
    one, five, _ = os.getloadavg()
    return f"load average {one:.1f} (5 min {five:.1f}) on {os.cpu_count()} cpus"


@dataclass
class Truth:
    """The served set's exact rankings (vector by numpy, text by unbounded Lucene)."""

    memory: MemoryStore
    uids: list[str]
    vectors: np.ndarray
    metas: list[dict[str, str]]
    served: np.ndarray  # bool mask over uids
    excluded: set[str] = field(default_factory=set)  # the uids not served

    def vector(self, query: str, qv: np.ndarray, meta: dict[str, str], k: int) -> list[str]:
        mask = self.served.copy()
        for key, value in meta.items():
            mask &= np.array([m.get(key) == value for m in self.metas])
        scores = np.where(mask, self.vectors @ qv, -np.inf)
        top = np.argsort(-scores, kind="stable")[:k]
        return [self.uids[i] for i in top if np.isfinite(scores[i])]

    def scores(self, qv: np.ndarray) -> dict[str, float]:
        return dict(zip(self.uids, (self.vectors @ qv).tolist(), strict=True))

    def text(self, query: str, meta: dict[str, str], k: int) -> list[dict[str, Any]]:
        terms = [f"{key}={value}" for key, value in sorted(meta.items())]
        lucene = lucene_text(query, Filters(self.memory.ns, None, tuple(terms)))
        if lucene is None:
            return []
        excluded = self.excluded
        rows = self.memory.store.read(
            SEARCH_TEXT_EXACT, ns=self.memory.ns, lucene=lucene, meta=terms, k=k + len(excluded)
        )
        # during a repair the served set is the memory less the cascade (and its root)
        hits = [row for row in rows[0]["hits"] if row["uid"] not in excluded]
        return hits[:k]


def recall(
    truth: Truth,
    mode: str,
    query: str,
    qv: np.ndarray,
    meta: dict[str, str],
    hits: list[tuple[str, float]],
) -> float:
    """recall@K against the exact ranking; tie-aware for vector and text (a hit scoring
    the K-th exact score counts: which of equal scores make the cut is arbitrary)."""
    got = [uid for uid, _ in hits]
    if mode == "vector":
        exact = truth.vector(query, qv, meta, K)
        if not exact:
            return 1.0 if not got else 0.0
        scores = truth.scores(qv)
        floor = scores[exact[-1]] - 1e-6
        return sum(1 for uid in got[:K] if scores.get(uid, -2.0) >= floor) / len(exact)
    if mode == "text":
        exact_rows = truth.text(query, meta, K)
        if not exact_rows:
            return 1.0 if not got else 0.0
        floor = float(exact_rows[-1]["score"]) - 1e-5
        exact_ids = {r["uid"] for r in exact_rows}
        good = sum(1 for uid, score in hits[:K] if uid in exact_ids or score >= floor)
        return min(1.0, good / len(exact_rows))
    depth = DEPTH * K
    scores = truth.scores(qv)
    vector_rows = [
        {"uid": u, "version": 1, "kind": "", "content": "", "score": (1 + scores[u]) / 2}
        for u in truth.vector(query, qv, meta, depth)
    ]
    fused = fuse({"vector": vector_rows, "text": truth.text(query, meta, depth)}, K)
    exact_ids = {h.uid for h in fused}
    return len(exact_ids & set(got[:K])) / len(exact_ids) if exact_ids else 1.0


@dataclass
class Sample:
    mode: str
    filter: str
    seconds: float
    recall: float


def _run_queries(
    memory: MemoryStore,
    truth: Truth,
    qs: Sequence[str],
    qvs: np.ndarray,
    rounds: int = 1,
    stop: Callable[[], bool] = lambda: False,
    check: Callable[[list[tuple[str, int]], float, float], int] = lambda pins, s, e: 0,
    window: Callable[[float, float], bool] = lambda start, end: True,
) -> tuple[list[Sample], int]:
    """Search every query with every filter in every mode (`rounds` times, until `stop`);
    returns the samples inside `window`, scored once the loop is over (so the loop only
    searches), and the violations `check` counted in every answer."""
    raw: list[tuple[str, str, int, float, list[tuple[str, float]]]] = []
    violations = 0
    for _ in range(rounds):
        for qi, query in enumerate(qs):
            for name, meta_of in FILTERS.items():
                for mode in MODES:
                    if stop():
                        return _scored(truth, qs, qvs, raw), violations
                    start = time.perf_counter()
                    hits = memory.search(query, K, meta=meta_of(qi), mode=mode)  # type: ignore[arg-type]
                    end = time.perf_counter()
                    violations += check([(h.uid, h.version) for h in hits], start, end)
                    if window(start, end):
                        got = [(h.uid, h.score or 0.0) for h in hits if h.uid != "root"]
                        raw.append((mode, name, qi, end - start, got))
    return _scored(truth, qs, qvs, raw), violations


def _scored(
    truth: Truth,
    qs: Sequence[str],
    qvs: np.ndarray,
    raw: list[tuple[str, str, int, float, list[tuple[str, float]]]],
) -> list[Sample]:
    return [
        Sample(mode, name, seconds, recall(truth, mode, qs[qi], qvs[qi], FILTERS[name](qi), got))
        for mode, name, qi, seconds, got in raw
    ]


def _table(title: str, samples: Sequence[Sample]) -> None:
    print(f"\n{title}")
    print(f"{'mode':<7} {'filter':<6} {'queries':>7} {'p50 ms':>8} {'p99 ms':>8} {'recall@10':>10}")
    for mode in MODES:
        for name in FILTERS:
            rows = [s for s in samples if s.mode == mode and s.filter == name]
            if not rows:
                continue
            secs = [s.seconds for s in rows]
            mean_recall = statistics.fmean(s.recall for s in rows)
            print(
                f"{mode:<7} {name:<6} {len(rows):>7} {_pct(secs, 0.5):>8.1f} "
                f"{_pct(secs, 0.99):>8.1f} {mean_recall:>10.3f}"
            )


# ---- sections -----------------------------------------------------------------------------
def bench_search(
    settings: Settings,
    texts: list[str],
    n: int,
    cascade: int,
    n_q: int,
    *,
    compact: bool = True,
    repair: bool = True,
    imported: bool = True,
    repeat: int = 1,
) -> None:
    cascade = min(cascade, n // 2)
    held_out = texts[n : n + n_q]
    qs = [" ".join(t.split()[:8]) for t in held_out]
    items = cascade_memory(texts, n, cascade)
    print(f"\n== search: {n} served artifacts ({cascade} in the repaired cascade), {_load()} ==")
    embedder = embedder_for(settings)
    with open_store(ns=f"search-{n}", settings=settings) as memory:
        memory.clear()
        started = time.perf_counter()
        matrix = np.array(embedder.embed([a.content for a in items]), dtype=np.float32)
        embed_s = time.perf_counter() - started
        started = time.perf_counter()
        memory.import_items(items)
        import_s = time.perf_counter() - started
        print(
            f"record: import {n} artifacts in {import_s:.1f}s ({n / import_s:.0f}/s, embedding, "
            f"both indexes and the graph); the embedder alone {embed_s:.1f}s "
            f"({n / embed_s:.0f} texts/s)"
        )
        uids = [a.uid for a in items]
        truth = Truth(memory, uids, matrix, [dict(a.meta) for a in items], np.ones(n, bool))
        qvs = np.array(embedder.embed(qs), dtype=np.float32)
        if imported or not compact:
            _run_queries(memory, truth, qs[:10], qvs[:10])  # warm-up (plans, caches)
            _floors(memory, truth, qs, qvs, "as imported", repeat)
            idle, _ = _run_queries(memory, truth, qs, qvs)
            _table(f"idle ({_load()})", idle)
        if compact:
            seconds = memory.compact_vector_index()
            print(f"\nreindex --compact: the vector index rebuilt in {seconds:.1f}s")
            _run_queries(memory, truth, qs[:10], qvs[:10])
            _floors(memory, truth, qs, qvs, "after reindex --compact", repeat)
            idle, _ = _run_queries(memory, truth, qs, qvs)
            _table(f"idle, after reindex --compact ({_load()})", idle)
        if repair:
            _use_overhead(memory, truth, qs, qvs)
            _during_repair(memory, truth, qs, qvs, cascade, embedder)
        memory.clear()


def _floors(
    memory: MemoryStore,
    truth: Truth,
    qs: Sequence[str],
    qvs: np.ndarray,
    state: str,
    repeat: int = 1,
) -> None:
    """Each mode beside the floors it stands on, unfiltered, interleaved per query in the
    same run: Neo4j's raw `db.index.vector.queryNodes` (k 10, and deeper, with its recall
    of the exact top 10), the raw full-text query (same Lucene text, 10 best), and an
    exact numpy scan of the same vectors. Each query starts its round at another of them
    (none is always the first, cold one) and runs each `repeat` times in a row, the
    fastest counted (other work on the machine only adds to a query's time)."""
    fetches = (10, 20, 50, 100)
    seconds: dict[str, list[float]] = {f"raw vector k {fetch}": [] for fetch in fetches}
    seconds |= {"raw text": [], "numpy exact": [], **{mode: [] for mode in MODES}}
    recalls: dict[str, list[float]] = {}

    def timed(name: str, run: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        best = float("inf")
        for _ in range(repeat):
            started = time.perf_counter()
            found = run(*args, **kwargs)
            best = min(best, time.perf_counter() - started)
        seconds[name].append(best)
        return found

    matrix = np.ascontiguousarray(truth.vectors[truth.served])

    def exact_scan(qv: np.ndarray) -> np.ndarray:
        return np.argpartition(-(matrix @ qv), K)[:K]

    serve = memory.store.serve

    def raw_vector(fetch: int, query: str, qv: np.ndarray, exact: list[str]) -> None:
        name = f"raw vector k {fetch}"
        rows = timed(name, serve, RAW_VECTOR, k=fetch, vector=qv.tolist())
        top = [r["uid"] for r in rows][:K]
        recalls.setdefault(name, []).append(len(set(top) & set(exact)) / K)

    def raw_text(_: int, query: str, qv: np.ndarray, exact: list[str]) -> None:
        lucene = lucene_text(query, Filters(memory.ns)) or "+ns:none"
        timed("raw text", serve, RAW_TEXT, lucene=lucene, k=K)

    def numpy_exact(_: int, query: str, qv: np.ndarray, exact: list[str]) -> None:
        timed("numpy exact", exact_scan, qv)

    def search(m: int, query: str, qv: np.ndarray, exact: list[str]) -> None:
        mode = MODES[m]
        hits = timed(mode, memory.search, query, K, mode=mode, record_use=False)
        got = [(h.uid, h.score or 0.0) for h in hits]
        recalls.setdefault(mode, []).append(recall(truth, mode, query, qv, {}, got))

    Step = Callable[[int, str, np.ndarray, list[str]], None]
    steps: list[tuple[Step, int]] = [(raw_vector, fetch) for fetch in fetches]
    steps += [(raw_text, 0), (numpy_exact, 0)] + [(search, m) for m in range(len(MODES))]
    for qi, (query, qv) in enumerate(zip(qs, qvs, strict=True)):
        exact = truth.vector(query, qv, {}, K)
        turn = qi % len(steps)
        for step, arg in steps[turn:] + steps[:turn]:
            step(arg, query, qv, exact)
    p50 = {name: _pct(v, 0.5) for name, v in seconds.items()}
    p99 = {name: _pct(v, 0.99) for name, v in seconds.items()}
    floor50 = p50["raw vector k 10"] + p50["raw text"]
    floor99 = p99["raw vector k 10"] + p99["raw text"]
    print(
        f"\nfloors, no filter, {state} ({len(qs)} queries interleaved, each the fastest of "
        f"{repeat}; {_load()})"
    )
    print(f"{'query':<18} {'p50 ms':>8} {'p99 ms':>8} {'recall@10':>10}  ratio to its floor")
    floor_of = {
        "hybrid": (floor50, floor99, "raw vector k 10 + raw text"),
        "vector": (p50["raw vector k 10"], p99["raw vector k 10"], "raw vector k 10"),
        "text": (p50["raw text"], p99["raw text"], "raw text"),
    }
    for name in seconds:
        mean_recall = statistics.fmean(recalls[name]) if name in recalls else float("nan")
        ratio = ""
        if name in floor_of:
            f50, f99, label = floor_of[name]
            ratio = f"p50 {p50[name] / f50:.2f}x, p99 {p99[name] / f99:.2f}x ({label})"
        print(f"{name:<18} {p50[name]:>8.1f} {p99[name]:>8.1f} {mean_recall:>10.3f}  {ratio}")


def _use_overhead(
    memory: MemoryStore, truth: Truth, qs: Sequence[str], qvs: np.ndarray, rounds: int = 3
) -> None:
    """Search latency with use recording on vs off, same run, alternating
    rounds so load drifts hit both; and what the flushes (background and last) took."""
    recorder, was = memory.uses, memory.uses.enabled
    before = dict(recorder.stats)
    seconds: dict[bool, list[float]] = {False: [], True: []}
    try:
        for _ in range(rounds):
            for on in (False, True):
                recorder.enabled = on
                samples, _ = _run_queries(memory, truth, qs, qvs)
                seconds[on] += [s.seconds for s in samples]
        recorder.flush()
    finally:
        recorder.enabled = was
    flushes, written, flush_s = (recorder.stats[k] - before[k] for k in recorder.stats)
    off_s, on_s = (statistics.fmean(seconds[k]) for k in (False, True))
    print(
        f"\nuse recording: {len(seconds[True])} searches each; mean {off_s * 1e3:.1f} ms off, "
        f"{on_s * 1e3:.1f} ms on ({on_s / off_s:.2f}x); p50 {_pct(seconds[False], 0.5):.1f} / "
        f"{_pct(seconds[True], 0.5):.1f} ms; p99 {_pct(seconds[False], 0.99):.1f} / "
        f"{_pct(seconds[True], 0.99):.1f} ms; {flushes:.0f} flushes wrote {written:.0f} "
        f"identities in {flush_s * 1e3:.0f} ms in all (off the read path; {_load()})"
    )


def _during_repair(
    memory: MemoryStore,
    truth: Truth,
    qs: list[str],
    qvs: np.ndarray,
    cascade: int,
    embedder: Any,
) -> None:
    in_cascade = {f"c-{j}" for j in range(cascade)}
    truth.served = np.array([uid not in in_cascade and uid != "root" for uid in truth.uids])
    truth.excluded = in_cascade | {"root"}
    marks: dict[str, float] = {}
    done = threading.Event()
    result: dict[str, Any] = {}

    def progress(phase: str, finished: int, total: int) -> None:
        if phase == "barrier" and finished == 1:
            marks["barrier"] = time.perf_counter()
        if phase == "validate" and "validated" not in marks:
            marks["validated"] = time.perf_counter()  # publication starts after validation

    def repair() -> None:
        try:
            event = {
                "id": "bench-correct",
                "type": "correct",
                "roots": ["root"],
                "replacements": [{"replaces": "root", "content": "Corrected: " + qs[0]}],
            }
            started = time.perf_counter()
            result["report"] = memory.repair(event, progress=progress)
            result["seconds"] = time.perf_counter() - started
        finally:
            done.set()

    def check(pins: list[tuple[str, int]], start: float, end: float) -> int:
        """A withdrawn version in a search that started after the barrier committed, or a
        successor in one that ended before publication began (a search overlapping either
        commit may see either state)."""
        after_barrier = "barrier" in marks and start > marks["barrier"]
        before_publish = "validated" not in marks or end < marks["validated"]
        return sum(
            1
            for uid, version in pins
            if uid in in_cascade
            and ((after_barrier and version == 1) or (before_publish and version > 1))
        )

    def window(start: float, end: float) -> bool:
        return "barrier" in marks and start > marks["barrier"] and "validated" not in marks

    thread = threading.Thread(target=repair)
    thread.start()
    samples, violations = _run_queries(
        memory, truth, qs, qvs, rounds=50, stop=done.is_set, check=check, window=window
    )
    thread.join()
    report = result["report"]
    _table(
        f"during the repair of a {cascade}-artifact cascade (between its barrier and its "
        f"publication; violations {violations}; {_load()})",
        samples,
    )
    execution = report.seconds.get("execution", float("nan"))
    published = len(report.published)
    rows = memory.retrieve(kind="cache", limit=min(published, 10_000))
    started = time.perf_counter()
    embedder.embed([a.content for a in rows])
    alone = time.perf_counter() - started
    print(
        f"publication: {published} successors in {result['seconds']:.1f}s end to end; "
        f"execution phase (build, embed, stage) {execution:.1f}s = "
        f"{published / execution:.0f} successors/s; publication phase "
        f"{report.seconds.get('publication', float('nan')):.1f}s; the embedder alone on "
        f"{len(rows)} successor texts {len(rows) / alone:.0f} texts/s"
    )


def bench_overhead(base: Settings, texts: list[str], cascade: int, repeats: int) -> None:
    print(f"\n== overhead: repair of a {cascade}-artifact cascade with and without embeddings ==")
    items = cascade_memory(texts, cascade + 21, cascade)
    variants = {
        "without (embeddings off, no search indexes)": (False, True),
        "with (default)": (True, False),
    }
    times: dict[str, list[float]] = {}
    for name, (on, drop) in variants.items():
        settings = base.model_copy(update={"embeddings": on})
        with open_store(ns="bench-overhead", settings=settings) as memory:
            if drop:
                memory.store.write(DROP_SEARCH_INDEXES)
                memory.store.write(DROP_TEXT_INDEX)
            try:
                for r in range(repeats):
                    memory.clear()
                    memory.import_items(items)
                    started = time.perf_counter()
                    report = memory.repair(
                        {
                            "id": f"overhead-{r}",
                            "type": "correct",
                            "roots": ["root"],
                            "replacements": [{"replaces": "root", "content": texts[-1]}],
                        }
                    )
                    times.setdefault(name, []).append(time.perf_counter() - started)
                    phases = " ".join(f"{k} {v:.2f}" for k, v in report.seconds.items())
                    print(f"  {name}, run {r + 1}: {times[name][-1]:.2f}s ({phases})")
                memory.clear()
            finally:
                if drop:
                    memory.apply_schema()
                    memory.store.read(AWAIT_INDEXES)
    medians = {name: statistics.median(v) for name, v in times.items()}
    without, with_ = medians.values()
    print(
        f"median e2e: without {without:.2f}s, with {with_:.2f}s: {with_ / without:.2f}x "
        f"(target 1.2x; {_load()})"
    )


def main(argv: list[str] | None = None) -> int:
    # One BLAS thread: after each product OpenBLAS's threads spin for tens of ms, and on 2
    # cores that took CPU from the server and the client in whatever query came next
    # (the modes, which always ran after the exact scan: their ratios were inflated).
    with threadpool_limits(limits=1, user_api="blas"):
        return _main(argv)


def _main(argv: list[str] | None) -> int:
    parser = bench_args.parser("python -m bench.search", __doc__)
    parser.add_argument("--only", default="overhead,search", help="sections (default: %(default)s)")
    parser.add_argument(
        "--sizes", default="1e4,1e5", help="served artifacts (default: %(default)s)"
    )
    parser.add_argument("--cascade", type=float, default=1e4, help="cascade size (default: 1e4)")
    parser.add_argument("--queries", type=int, default=100, help="queries per table (default: 100)")
    parser.add_argument("--repeats", type=int, default=2, help="overhead runs each (default: 2)")
    parser.add_argument(
        "--no-compact", action="store_true", help="search: skip the reindex --compact round"
    )
    parser.add_argument(
        "--compacted-only",
        action="store_true",
        help="search: measure only after reindex --compact (skip the index as imported)",
    )
    parser.add_argument(
        "--repeat",
        type=int,
        default=1,
        help="floors: runs of each query in a row, the fastest counted (default: 1)",
    )
    parser.add_argument(
        "--no-repair",
        action="store_true",
        help="search: skip use recording and the searches during a repair",
    )
    args = parser.parse_args(argv)
    only = {s.strip() for s in args.only.split(",")}
    settings = load_settings(search_meta_fields=META_FIELDS)
    texts = corpus(settings.state_dir)
    sizes = [int(float(s)) for s in args.sizes.split(",")]
    need = max(sizes) + args.queries
    print(f"bench search: corpus of {len(texts)} stdlib docstring passages, {_load()}")
    if len(texts) < need:
        texts = texts + [f"{t} (variant {k})" for k in range(1, 3) for t in texts]
        print(f"  the memory needs {need}: passages repeat with a variant suffix beyond that")
    with open_store(ns="bench-search", settings=settings) as base:
        base.apply_schema()
        print(f"server {base.store.verify()} at {base.store.uri}")
    if "overhead" in only:
        bench_overhead(settings, texts, int(args.cascade), args.repeats)
    if "search" in only:
        for n in sizes:
            bench_search(
                settings,
                texts,
                n,
                int(args.cascade),
                args.queries,
                compact=not args.no_compact,
                repair=not args.no_repair,
                imported=not args.compacted_only,
                repeat=args.repeat,
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
