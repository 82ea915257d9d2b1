"""Retrieval quality on public conversation memory (prints tables; asserts nothing):
``python -m bench.retrieval``.

The data is the memory category of the Berkeley Function Calling Leaderboard, read from
the PyPI package ``bfcl-eval`` (2026.3.23; Apache-2.0; the `bench` extra's install step,
``pip install --no-deps bfcl-eval``): five personas (customer, finance, healthcare,
notetaker, student) each tell an assistant about themselves over 5 to 10 sessions of
user turns (``data/memory_prereq_conversation/``), then 155 questions ask for one fact of
those sessions (``data/BFCL_v4_memory.json``), each with its ground truth and the passage
that states it (``possible_answer/BFCL_v4_memory.json``, ``source``). Nothing is fetched
at run time. The evidence label of a question is the user turn that contains its source
passage (the passage's fragments between ``...``, compared with quotes, dashes and case
folded; when no turn contains them all, the turn sharing most of the passage's words, if
it shares at least 60% of them); questions with no such turn are left out and counted.

Each user turn is one artifact (kind ``record``, meta ``scenario`` and ``session``),
imported through ``MemoryStore.record_many``; each question is searched with
``MemoryStore.search`` within its persona's memory (``meta={"scenario": ...}``, the way an
agent searches one user's memory) in each mode. Beside them, in the same run: a plain
BM25 baseline (``bm25s`` with its English stop words and PyStemmer's English stemmer over
the same turns of the same persona; no project code), so ``text`` (the engine's full-text
mode alone) and BM25 can be told apart, and offline candidates for the fusion and
passage decisions, computed here from the served rankings (``--candidates``).

Metrics per question: recall@5 and recall@10 (the share of its evidence turns in the top
5 / 10: here one turn each, so the hit rate) and nDCG@10 (binary relevance), averaged
overall and per persona (the set's question type).

Knowledge update (``--updates N``, default 40): for N questions whose answer is written
in their evidence turn, a second namespace is imported with that answer replaced in the
turn (an out-of-date fact), then each such turn is corrected with
``MemoryStore.update`` (a ``correct`` event: the old version is superseded, the
current one served). The same questions are searched there: their recall must not drop
against the plain import, and a hit on a superseded version (``stale hits``) would be a
violation.

Sized for 2 cores: the default (every question, 40 updates) takes about a minute after
the import; ``--questions N`` takes the first N per persona. Run against the configured
Neo4j (``MEMOREPAIR_*``).
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import os
import re
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from importlib import metadata, resources
from typing import Any

from bench import args as bench_args
from memorepair.api import MemoryStore, embedder_for, open_store
from memorepair.model import ArtifactIn, Kind
from memorepair.settings import Settings, load_settings

PACKAGE = "bfcl-eval"
SCENARIOS = ("customer", "finance", "healthcare", "notetaker", "student")
MODES = ("hybrid", "vector", "text")
K = 10
DEPTH = 50  # how deep the offline candidates read each served ranking
META_FIELDS = ["scenario"]

_FOLD = str.maketrans({"\u2019": "'", "\u2018": "'", "\u201c": '"', "\u201d": '"', "\u2014": "-"})
_WORDS = re.compile(r"[a-z0-9]+")


# ---- data -------------------------------------------------------------------------------
@dataclass(frozen=True)
class Turn:
    uid: str
    scenario: str
    session: str
    content: str


@dataclass(frozen=True)
class Question:
    id: str
    scenario: str
    text: str
    answers: tuple[str, ...]
    evidence: frozenset[str]


def _data(*parts: str) -> str:
    return resources.files("bfcl_eval").joinpath("data", *parts).read_text(encoding="utf-8")


def _lines(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def _fold(text: str) -> str:
    return " ".join(text.translate(_FOLD).lower().split()).strip().strip('"').strip()


def load_turns() -> list[Turn]:
    turns: list[Turn] = []
    for scenario in SCENARIOS:
        for item in _lines(_data("memory_prereq_conversation", f"memory_{scenario}.json")):
            for t, turn in enumerate(item["question"]):  # one session: a list of turns
                for m, message in enumerate(turn):
                    if message["role"] == "user" and message["content"].strip():
                        uid = f"{item['id']}/t{t}.{m}"
                        turns.append(Turn(uid, scenario, item["id"], message["content"]))
    return turns


def _evidence(source: str, candidates: Sequence[Turn]) -> frozenset[str]:
    fragments = [f for f in (_fold(p) for p in re.split(r"\.\.\.|\u2026", source)) if len(f) > 8]
    if not fragments:
        return frozenset()
    exact = [t.uid for t in candidates if all(f in _fold(t.content) for f in fragments)]
    if exact:
        return frozenset(exact)
    words = set(_WORDS.findall(" ".join(fragments)))
    best = max(candidates, key=lambda t: len(words & set(_WORDS.findall(_fold(t.content)))))
    shared = len(words & set(_WORDS.findall(_fold(best.content))))
    return frozenset([best.uid]) if words and shared >= 0.6 * len(words) else frozenset()


def load_questions(turns: Sequence[Turn]) -> tuple[list[Question], int]:
    """The questions with an evidence turn, and how many had none."""
    answers = {row["id"]: row for row in _lines(_data("possible_answer", "BFCL_v4_memory.json"))}
    by_scenario = {s: [t for t in turns if t.scenario == s] for s in SCENARIOS}
    found: list[Question] = []
    dropped = 0
    for row in _lines(_data("BFCL_v4_memory.json")):
        truth = answers[row["id"]]
        evidence = _evidence(truth.get("source", ""), by_scenario[row["scenario"]])
        if not evidence:
            dropped += 1
            continue
        text = " ".join(m["content"] for turn in row["question"] for m in turn)
        found.append(
            Question(row["id"], row["scenario"], text, tuple(truth["ground_truth"]), evidence)
        )
    return found, dropped


# ---- metrics ----------------------------------------------------------------------------
def recall_at(ranked: Sequence[str], relevant: frozenset[str], k: int) -> float:
    return len(relevant & set(ranked[:k])) / len(relevant)


def ndcg_at(ranked: Sequence[str], relevant: frozenset[str], k: int) -> float:
    gain = sum(1 / math.log2(i + 2) for i, uid in enumerate(ranked[:k]) if uid in relevant)
    ideal = sum(1 / math.log2(i + 2) for i in range(min(k, len(relevant))))
    return gain / ideal


@dataclass
class Scores:
    """Per-question metrics of one system, by persona."""

    rows: dict[str, list[tuple[float, float, float]]] = field(default_factory=dict)

    def add(self, scenario: str, ranked: Sequence[str], relevant: frozenset[str]) -> None:
        metrics = (
            recall_at(ranked, relevant, 5),
            recall_at(ranked, relevant, 10),
            ndcg_at(ranked, relevant, 10),
        )
        self.rows.setdefault(scenario, []).append(metrics)

    def mean(self, scenario: str | None = None) -> tuple[float, float, float, int]:
        rows = (
            self.rows.get(scenario, []) if scenario else [r for v in self.rows.values() for r in v]
        )
        if not rows:
            return (math.nan, math.nan, math.nan, 0)
        r5, r10, nd = (statistics.fmean(col) for col in zip(*rows, strict=True))
        return r5, r10, nd, len(rows)


# ---- the BM25 baseline ------------------------------------------------------------------
class Bm25:
    """bm25s over one persona's turns: English stop words and PyStemmer's stemmer."""

    def __init__(self, turns: Sequence[Turn]) -> None:
        import bm25s
        import Stemmer

        logging.getLogger("bm25s").setLevel(logging.WARNING)
        self._bm25s = bm25s
        self._stemmer = Stemmer.Stemmer("english")
        self._uids = [t.uid for t in turns]
        tokens = bm25s.tokenize(
            [t.content for t in turns], stopwords="en", stemmer=self._stemmer, show_progress=False
        )
        self._index = bm25s.BM25()
        self._index.index(tokens, show_progress=False)

    def search(self, text: str, k: int) -> list[str]:
        tokens = self._bm25s.tokenize(
            [text], stopwords="en", stemmer=self._stemmer, show_progress=False
        )
        if not tokens.vocab:
            return []
        k = min(k, len(self._uids))
        docs, scores = self._index.retrieve(tokens, k=k, show_progress=False)
        return [self._uids[int(d)] for d, s in zip(docs[0], scores[0], strict=True) if s > 0]


# ---- offline candidates (decisions; not what memorepair serves) ---------------------------
Ranked = list[tuple[str, float]]


def rrf(lists: dict[str, Ranked], weights: dict[str, float], k: int, c: int = 60) -> list[str]:
    scores: dict[str, float] = {}
    for mode, ranked in lists.items():
        for rank, (uid, _) in enumerate(ranked, start=1):
            scores[uid] = scores.get(uid, 0.0) + weights[mode] / (c + rank)
    return sorted(scores, key=lambda u: (-scores[u], u))[:k]


def convex(lists: dict[str, Ranked], text_weight: float, k: int) -> list[str]:
    """text_weight * BM25/max(BM25) + (1 - text_weight) * min-max cosine, each over its
    own list (a uid missing from a list scores 0 there)."""
    scores: dict[str, float] = {}
    for mode, ranked in lists.items():
        if not ranked:
            continue
        values = [s for _, s in ranked]
        top, low = max(values), (min(values) if mode == "vector" else 0.0)
        span = (top - low) or 1.0
        weight = text_weight if mode == "text" else 1.0 - text_weight
        for uid, score in ranked:
            scores[uid] = scores.get(uid, 0.0) + weight * (score - low) / span
    return sorted(scores, key=lambda u: (-scores[u], u))[:k]


_SENTENCE = re.compile(r"(?<=[.!?])\s+")


def passages(text: str, size: int = 2) -> list[str]:
    """The text's sentences, `size` at a time (overlapping by one)."""
    sentences = [s for s in _SENTENCE.split(text) if s.strip()]
    if len(sentences) <= size:
        return [text]
    return [" ".join(sentences[i : i + size]) for i in range(len(sentences) - size + 1)]


class Chunks:
    """Offline passage vectors: each turn scored by its best passage (max cosine), or by
    a blend of that and its whole-turn cosine."""

    def __init__(self, embedder: Any, turns: Sequence[Turn]) -> None:
        import numpy as np

        self._np = np
        self._embedder = embedder
        owners: list[int] = []
        texts: list[str] = []
        for i, turn in enumerate(turns):
            for passage in passages(turn.content):
                owners.append(i)
                texts.append(passage)
        self._owners = np.array(owners)
        self._vectors = np.array(embedder.embed(texts), dtype=np.float32)
        self._whole = np.array(embedder.embed([t.content for t in turns]), dtype=np.float32)
        self._turns = list(turns)

    def ranked(self, q: Question, scope: str, blend: float, k: int, pool: int = 0) -> Ranked:
        """Scored by `blend` * best passage + (1 - `blend`) * whole turn; with `pool`, only
        the `pool` best turns by whole-turn cosine are rescored (a rerank of an index's
        first answer)."""
        np = self._np
        (qv,) = np.array(self._embedder.embed([q.text]), dtype=np.float32)
        best = np.full(len(self._turns), -1.0, dtype=np.float32)
        np.maximum.at(best, self._owners, self._vectors @ qv)
        whole = self._whole @ qv
        scores = blend * best + (1 - blend) * whole
        keep = [i for i, t in enumerate(self._turns) if scope == "all" or t.scenario == q.scenario]
        if pool:
            keep = sorted(keep, key=lambda i: -float(whole[i]))[:pool]
        keep.sort(key=lambda i: -float(scores[i]))
        return [(self._turns[i].uid, float(scores[i])) for i in keep[:k]]


def _two(lists: dict[str, Ranked]) -> dict[str, Ranked]:
    return {"vector": lists["vector"], "text": lists["text"]}


CANDIDATES: dict[str, Callable[[dict[str, Ranked]], list[str]]] = {
    "rrf 1:1 (today)": lambda r: rrf(_two(r), {"vector": 1.0, "text": 1.0}, K),
    "rrf text 2:1": lambda r: rrf(_two(r), {"vector": 1.0, "text": 2.0}, K),
    "rrf text 3:1": lambda r: rrf(_two(r), {"vector": 1.0, "text": 3.0}, K),
    "convex text .5": lambda r: convex(_two(r), 0.5, K),
    "convex text .6": lambda r: convex(_two(r), 0.6, K),
    "convex text .7": lambda r: convex(_two(r), 0.7, K),
    "convex text .8": lambda r: convex(_two(r), 0.8, K),
    "vector passages": lambda r: [uid for uid, _ in r["passages"][:K]],
    "vector pass.+whole": lambda r: [uid for uid, _ in r["blend"][:K]],
    "convex .7 passages": lambda r: convex({"text": r["text"], "vector": r["passages"]}, 0.7, K),
    "convex .7 pass+whole": lambda r: convex({"text": r["text"], "vector": r["blend"]}, 0.7, K),
    "vector rerank30 p+w": lambda r: [uid for uid, _ in r["rerank"][:K]],
    "convex .7 rerank30": lambda r: convex({"text": r["text"], "vector": r["rerank"]}, 0.7, K),
}


# ---- running ----------------------------------------------------------------------------
def _load() -> str:
    one, five, _ = os.getloadavg()
    return f"load average {one:.1f} (5 min {five:.1f}) on {os.cpu_count()} cpus"


def _items(turns: Sequence[Turn], stale: dict[str, str] | None = None) -> list[ArtifactIn]:
    stale = stale or {}
    return [
        ArtifactIn(
            uid=t.uid,
            kind=Kind.RECORD,
            content=stale.get(t.uid, t.content),
            meta={"scenario": t.scenario, "session": t.session},
        )
        for t in turns
    ]


def _ranked(
    memory: MemoryStore, q: Question, mode: str, k: int, scope: str
) -> list[tuple[str, float, int]]:
    meta = {"scenario": q.scenario} if scope == "persona" else None
    hits = memory.search(q.text, k, meta=meta, mode=mode, record_use=False)  # type: ignore[arg-type]
    return [(h.uid, h.score or 0.0, h.version) for h in hits]


def evaluate(
    memory: MemoryStore,
    questions: Sequence[Question],
    turns: Sequence[Turn],
    scope: str,
    candidates: bool,
) -> tuple[dict[str, Scores], dict[str, float]]:
    """Every system's scores; and each mode's median search time (ms)."""
    systems: dict[str, Scores] = {name: Scores() for name in (*MODES, "bm25s")}
    if candidates:
        systems.update({name: Scores() for name in CANDIDATES})
    if scope == "persona":
        bm25 = {s: Bm25([t for t in turns if t.scenario == s]) for s in SCENARIOS}
    else:
        everyone = Bm25(turns)
        bm25 = dict.fromkeys(SCENARIOS, everyone)
    seconds: dict[str, list[float]] = {mode: [] for mode in MODES}
    chunks = Chunks(embedder_for(memory.settings), turns) if candidates else None
    for q in questions:
        for mode in MODES:
            started = time.perf_counter()
            ranked = _ranked(memory, q, mode, K, scope)
            seconds[mode].append(time.perf_counter() - started)
            systems[mode].add(q.scenario, [uid for uid, _, _ in ranked], q.evidence)
        systems["bm25s"].add(q.scenario, bm25[q.scenario].search(q.text, K), q.evidence)
        if candidates:
            lists = {
                mode: [(uid, score) for uid, score, _ in _ranked(memory, q, mode, DEPTH, scope)]
                for mode in ("vector", "text")
            }
            assert chunks is not None
            lists["passages"] = chunks.ranked(q, scope, 1.0, DEPTH)
            lists["blend"] = chunks.ranked(q, scope, 0.5, DEPTH)
            lists["rerank"] = chunks.ranked(q, scope, 0.5, DEPTH, pool=30)
            for name, fuse in CANDIDATES.items():
                systems[name].add(q.scenario, fuse(lists), q.evidence)
    medians = {mode: statistics.median(v) * 1e3 for mode, v in seconds.items()}
    return systems, medians


def knowledge_update(
    settings: Settings, turns: Sequence[Turn], questions: Sequence[Question], n: int, scope: str
) -> tuple[dict[str, Scores], dict[str, Scores], int, int]:
    """Plain vs updated scores on the same questions, stale hits, and the updates made."""
    by_uid = {t.uid: t for t in turns}
    chosen: list[Question] = []
    stale: dict[str, str] = {}
    for q in questions:
        (uid,) = sorted(q.evidence)[:1]
        answer = next((a for a in q.answers if a in by_uid[uid].content), None)
        if answer is None or uid in stale or len(chosen) >= n:
            continue
        stale[uid] = by_uid[uid].content.replace(answer, "[not yet known]")
        chosen.append(q)
    plain: dict[str, Scores] = {m: Scores() for m in MODES}
    updated: dict[str, Scores] = {m: Scores() for m in MODES}
    stale_hits = 0
    with open_store(ns="retrieval-update", settings=settings) as memory:
        memory.clear()
        memory.record_many(_items(turns, stale))
        for uid in stale:
            memory.update(uid, content=by_uid[uid].content, reason="knowledge update")
        for q in chosen:
            for mode in MODES:
                ranked = _ranked(memory, q, mode, K, scope)
                stale_hits += sum(1 for uid, _, v in ranked if uid in stale and v < 2)
                updated[mode].add(q.scenario, [uid for uid, _, _ in ranked], q.evidence)
        memory.clear()
    with open_store(ns="retrieval", settings=settings) as memory:
        for q in chosen:
            for mode in MODES:
                ranked = _ranked(memory, q, mode, K, scope)
                plain[mode].add(q.scenario, [uid for uid, _, _ in ranked], q.evidence)
    return plain, updated, stale_hits, len(stale)


def _table(title: str, systems: dict[str, Scores], per_type: bool) -> None:
    print(f"\n{title}")
    print(f"{'system':<18} {'type':<11} {'n':>4} {'R@5':>6} {'R@10':>6} {'nDCG@10':>8}")
    for name, scores in systems.items():
        for scenario in (None, *SCENARIOS) if per_type else (None,):
            r5, r10, nd, n = scores.mean(scenario)
            if n:
                label = scenario or "all"
                print(f"{name:<18} {label:<11} {n:>4} {r5:>6.3f} {r10:>6.3f} {nd:>8.3f}")


def _arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = bench_args.parser("python -m bench.retrieval", __doc__)
    parser.add_argument("--questions", type=int, default=0, help="first N per persona (0: all)")
    parser.add_argument("--updates", type=int, default=40, help="knowledge updates (default 40)")
    parser.add_argument(
        "--candidates", action="store_true", help="also score offline fusion candidates"
    )
    parser.add_argument(
        "--scopes",
        default="all,persona",
        help="all: every persona's turns in one memory, each question searched over all of "
        "them; persona: within the asking persona's turns (meta filter); default %(default)s",
    )
    parser.add_argument("--no-types", action="store_true", help="overall rows only")
    args = parser.parse_args(argv)
    args.scopes = [s.strip() for s in args.scopes.split(",") if s.strip()]
    if not args.scopes or set(args.scopes) - {"all", "persona"}:
        parser.error(f"--scopes: all and/or persona, got {args.scopes!r}")
    return args


def main(argv: list[str] | None = None) -> int:
    args = _arguments(argv)
    settings = load_settings(search_meta_fields=META_FIELDS)
    turns = load_turns()
    questions, dropped = load_questions(turns)
    if args.questions:
        questions = [
            q
            for s in SCENARIOS
            for q in [q for q in questions if q.scenario == s][: args.questions]
        ]
    print(
        f"bench retrieval: {PACKAGE} {metadata.version(PACKAGE)} memory category: "
        f"{len(turns)} user turns in {len({t.session for t in turns})} sessions of "
        f"{len(SCENARIOS)} personas; {len(questions)} questions ({dropped} without an "
        f"evidence turn left out); {_load()}"
    )
    with open_store(ns="retrieval", settings=settings) as memory:
        memory.apply_schema()
        memory.clear()
        started = time.perf_counter()
        memory.record_many(_items(turns))
        memory.flush_embeddings()
        print(f"import: {len(turns)} turns in {time.perf_counter() - started:.1f}s")
        print(f"embedder: {memory.settings.embedding_model or 'offline default (wordllama)'}")
        for scope in args.scopes:
            systems, medians = evaluate(memory, questions, turns, scope, args.candidates)
            timing = ", ".join(f"{m} {v:.1f} ms" for m, v in medians.items())
            _table(
                f"scope {scope}: recall and nDCG, k=10 (median search: {timing}; {_load()})",
                systems,
                not args.no_types,
            )
    if args.updates:
        scope = args.scopes[0]
        plain, updated, stale_hits, n = knowledge_update(
            settings, turns, questions, args.updates, scope
        )
        _table(f"scope {scope}: the same {n} questions, plain import", plain, False)
        _table(
            f"after {n} knowledge updates (the old fact in the turn, then `update` to the "
            f"current one); stale hits {stale_hits}",
            updated,
            False,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
