"""Served-only search against the real Neo4j: never a withdrawn, staged or superseded
version in any mode (after, during, and with a repair paused half-way), the exact filtered
top-k at 1% selectivity, and the refusal of a query of another embedding model."""

from __future__ import annotations

import json
import math
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from reliability_support import correct_event, fan_memory, run_cli, start_paused, write_event
from tests.unit.embedding_endpoint import Endpoint, serving

from memorepair import queries
from memorepair.api import MemoryStore, embedder_for, open_store
from memorepair.errors import EmbeddingError, InputError
from memorepair.model import ArtifactIn, Kind
from memorepair.queries import Query
from memorepair.serving.search import Searcher, filters
from memorepair.settings import Settings
from memorepair.store import VectorShape

NO_FILTER: dict[str, Any] = {"kinds": None, "meta": None, "since": None, "until": None}

MODES = ("hybrid", "vector", "text")
SECRET = "The launch code for project Falcon is seven four one."
QUERY = "launch code of project Falcon"


def _pins(memory: MemoryStore, query: str, k: int = 10, **kw: Any) -> dict[str, set[tuple]]:
    return {
        mode: {(h.uid, h.version) for h in memory.search(query, k, mode=mode, **kw)}
        for mode in MODES
    }


def _duplicate_memory() -> list[ArtifactIn]:
    """A source record, a summary derived from it that nearly repeats it (the query's best
    match), and unrelated memory around them."""
    items = [
        ArtifactIn(uid="src", kind=Kind.RECORD, content=SECRET),
        ArtifactIn(uid="dup", kind=Kind.SUMMARY, content=f"- {SECRET} [src@v1]", inputs=["src"]),
        ArtifactIn(
            uid="other", kind=Kind.RECORD, content="Ana's hotel in Zurich is near the lake."
        ),
    ]
    items += [
        ArtifactIn(uid=f"n-{i}", kind=Kind.RECORD, content=f"Note {i}: the train leaves at {i}:00.")
        for i in range(30)
    ]
    return items


def test_withdrawn_near_duplicate_never_returned_and_successor_returned(
    memory: MemoryStore,
) -> None:
    memory.import_items(_duplicate_memory())
    before = _pins(memory, QUERY)
    for mode in MODES:  # the near-duplicate is the best match before the repair
        assert {("src", 1), ("dup", 1)} <= before[mode], (mode, before[mode])
        assert memory.search(QUERY, 1, mode=mode)[0].uid in {"src", "dup"}

    fixed = "The launch code for project Falcon is nine nine two."
    report = memory.repair(
        {
            "id": "fix",
            "type": "correct",
            "roots": ["src"],
            "replacements": [{"replaces": "src", "content": fixed}],
        }
    )
    assert report.published == ["dup"]
    after = _pins(memory, QUERY)
    for mode in MODES:
        assert not {("src", 1), ("dup", 1)} & after[mode], (mode, after[mode])
        assert {("src", 2), ("dup", 2)} <= after[mode], (mode, after[mode])
    successor = next(h for h in memory.search(QUERY, 5) if h.uid == "dup")
    assert "nine nine two" in successor.content and "seven four one" not in successor.content

    memory.repair({"id": "gone", "type": "delete", "roots": ["src"]})
    gone = _pins(memory, QUERY, k=50)
    for mode in MODES:  # deleted root and removed summary: no version of either, ever
        assert not {uid for uid, _ in gone[mode]} & {"src", "dup"}, (mode, gone[mode])


def test_search_during_repair_never_sees_cascade_or_staged_versions(memory: MemoryStore) -> None:
    width = 1500
    memory.import_items(fan_memory(width))
    rows: list[tuple[float, float, str, set[tuple[str, int]]]] = []
    stop = threading.Event()
    failures: list[BaseException] = []

    def reader() -> None:
        with open_store(ns=memory.ns, settings=memory.settings) as other:
            n = 0
            while not stop.is_set():
                mode = MODES[n % 3]
                n += 1
                start = time.monotonic()
                try:
                    hits = other.search("root v1 retained", 30, mode=mode)  # type: ignore[arg-type]
                except BaseException as exc:  # surfaced in the test thread
                    failures.append(exc)
                    return
                rows.append((start, time.monotonic(), mode, {(h.uid, h.version) for h in hits}))

    thread = threading.Thread(target=reader)
    thread.start()
    marks: dict[str, float] = {}
    try:
        time.sleep(1.0)

        def progress(phase: str, done: int, total: int) -> None:
            if phase == "barrier" and done == 1:
                marks["barrier"] = time.monotonic()
            if phase == "publish" and done == 0:
                marks["publishing"] = time.monotonic()  # the first batch's transaction starts

        report = memory.repair(correct_event("big", "root", "root v2"), progress=progress)
        memory.flush_embeddings()  # the successors' vectors land just after publication
        marks["end"] = time.monotonic()
        time.sleep(1.0)
    finally:
        stop.set()
        thread.join(timeout=60)
    assert not failures, failures
    assert report.status == "completed" and len(report.published) == width
    cascade = {f"c-{i}" for i in range(width)} | {"root"}
    stale = [
        r
        for r in rows
        if r[0] > marks["barrier"] and any(uid in cascade and v == 1 for uid, v in r[3])
    ]
    early = [
        r
        for r in rows
        if r[1] < marks["publishing"] and any(uid.startswith("c-") and v > 1 for uid, v in r[3])
    ]
    assert not stale and not early, (stale[:2], early[:2])
    during = [r for r in rows if r[0] > marks["barrier"] and r[1] < marks["publishing"]]
    after = [r for r in rows if r[0] > marks["end"]]
    assert during and after, (len(during), len(after))
    assert {r[2] for r in during} == set(MODES)
    for _, _, mode, pins in after:  # the successors are found once published
        assert any(uid.startswith("c-") and v == 2 for uid, v in pins), mode


@pytest.mark.parametrize("phase", ["withdrawn", "staged"])
def test_search_while_a_repair_is_paused_half_way(
    memory: MemoryStore, neo4j_settings: Settings, tmp_path: Path, phase: str
) -> None:
    memory.import_items(_duplicate_memory())
    event = write_event(
        tmp_path,
        {
            "id": f"pause-{phase}",
            "type": "correct",
            "roots": ["src"],
            "replacements": [{"replaces": "src", "content": "Falcon's launch code changed."}],
        },
    )
    paused = start_paused(neo4j_settings, memory.ns, event, f"pause-{phase}", phase)
    try:
        held = _pins(memory, QUERY, k=50)
        for mode in MODES:  # withdrawn dup@1: never
            assert ("dup", 1) not in held[mode], (mode, held[mode])
            assert ("src", 1) not in held[mode] and ("src", 2) in held[mode], held[mode]
        if phase == "withdrawn":
            assert not any(uid == "dup" for mode in MODES for uid, _ in held[mode]), held
        else:  # dup@2 was published as it was staged, its vector is written after publication
            [live] = [v for v in memory.lineage("dup") if v["visibility"] == "Live"]
            assert live["version"] == 2
            assert ("dup", 2) in held["text"] and ("dup", 2) in held["hybrid"], held
            assert not any(uid == "dup" for uid, _ in held["vector"]), held["vector"]
    finally:
        paused.kill()
    done = run_cli(memory.ns, "resume")
    assert done.returncode == 0, done.stderr
    after = _pins(memory, QUERY)
    for mode in MODES:
        assert ("dup", 2) in after[mode] and ("dup", 1) not in after[mode], (mode, after[mode])


def _cosine(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True)) / (
        math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    )


def test_filters_at_one_percent_selectivity_return_the_exact_top_k(
    neo4j_settings: Settings,
) -> None:
    settings = neo4j_settings.model_copy(update={"search_meta_fields": ["topic"]})
    with _store(settings) as memory:
        texts = [
            f"{word} report {i}: the {word} of the {colour} team was reviewed on day {i % 31}."
            for i, (word, colour) in enumerate(
                (w, c)
                for c in ("red", "blue", "green", "amber", "grey")
                for w in ("budget", "schedule", "travel", "hiring", "security", "launch")
                for _ in range(70)
            )
        ]
        memory.import_items(
            ArtifactIn(
                uid=f"a-{i}",
                kind=Kind.SUMMARY if i % 2 else Kind.RECORD,
                content=text,
                meta={"topic": f"t{i % 100}"},
            )
            for i, text in enumerate(texts)
        )
        query = "security review of the amber team"
        wanted = [i for i in range(len(texts)) if i % 100 == 7]  # 1% of the memory
        assert len(wanted) == len(texts) // 100 and len(wanted) >= 20
        embedder = embedder_for(settings)
        qv = embedder.embed([query])[0]
        vectors = embedder.embed([texts[i] for i in wanted])
        exact = sorted(wanted, key=lambda i: -_cosine(qv, vectors[wanted.index(i)]))
        for mode in MODES:
            hits = memory.search(query, 10, meta={"topic": "t7"}, mode=mode)  # type: ignore[arg-type]
            assert len(hits) == 10, mode
            assert all(h.uid in {f"a-{i}" for i in wanted} for h in hits), mode
        got = [h.uid for h in memory.search(query, 10, meta={"topic": "t7"}, mode="vector")]
        assert got == [f"a-{i}" for i in exact[:10]]
        # kinds and meta together still give k (the set has 1% / 2 of the memory, >= 10)
        both = memory.search(query, 10, kinds=["summary"], meta={"topic": "t7"})
        assert len(both) == 10 and all(h.kind == "summary" for h in both)
        with pytest.raises(InputError, match="not searchable"):
            memory.search(query, meta={"colour": "red"})

        # the path each ranking took: 1% is scored exactly after one index query, no
        # filter stays on the index, a filter nothing passes ends exhaustive (or with the
        # index exhausted: nothing more to widen to)
        searcher = Searcher(memory.store, memory.embedder)

        def path(**kw: Any) -> str:
            f = filters(memory.ns, searchable=["topic"], **{**NO_FILTER, **kw})
            return searcher.vector(query, 10, f).path

        assert path(meta={"topic": "t7"}).endswith(">scan:21")  # 21 versions have t7
        assert path().startswith("index:100")  # (other namespaces in the index may widen it)
        future = datetime.now(UTC) + timedelta(hours=1)
        assert path(since=future).startswith("index:100>scan:capped>")  # 2100 > SCAN_CAP
        for mode in MODES:
            assert memory.search(query, 10, since=future, mode=mode) == []  # type: ignore[arg-type]
        searcher.close()


@pytest.fixture
def other_model(neo4j_settings: Settings) -> Settings:
    return neo4j_settings.model_copy(update={"embedding_dimension": 64})


def _store(settings: Settings, ns: str | None = None) -> Any:
    import uuid

    return _Cleared(open_store(ns=ns or f"t{uuid.uuid4().hex[:12]}", settings=settings))


class _Cleared:
    """A store whose namespace is cleared when the block ends."""

    def __init__(self, memory: MemoryStore) -> None:
        self.memory = memory

    def __enter__(self) -> MemoryStore:
        return self.memory

    def __exit__(self, *_: object) -> None:
        self.memory.clear()
        self.memory.close()


def test_another_embedder_is_refused_until_reindex(
    memory: MemoryStore, other_model: Settings
) -> None:
    memory.import_items(_duplicate_memory())
    with open_store(ns=memory.ns, settings=other_model) as changed:
        for mode in ("hybrid", "vector"):
            with pytest.raises(EmbeddingError, match=r"embedded with wordllama/l2_supercat-256"):
                changed.search(QUERY, mode=mode)  # type: ignore[arg-type]
        assert changed.search(QUERY, mode="text")  # words need no model
        with pytest.raises(EmbeddingError, match="reindex"):
            changed.record({"uid": "late", "kind": "record", "content": "x"})
        with pytest.raises(EmbeddingError, match="nothing was withdrawn"):
            changed.repair({"id": "refused", "type": "delete", "roots": ["src"]})
        assert changed.retrieve(uid="src")  # the refused repair withdrew nothing

        report = changed.reindex()
        assert report.model == "wordllama/l2_supercat-64" and report.embedded == report.versions
        assert report.versions == 33
        hits = changed.search(QUERY, 3, mode="vector")
        assert hits[0].uid in {"src", "dup"}
        changed.record({"uid": "late", "kind": "record", "content": "Falcon launch moved."})
    with pytest.raises(EmbeddingError, match="l2_supercat-64"):  # now the old one is refused
        memory.search(QUERY)


def test_cli_search_and_reindex(memory: MemoryStore) -> None:
    from click.testing import CliRunner

    from memorepair import sample
    from memorepair.cli import cli

    def run(*args: str) -> Any:
        result = CliRunner().invoke(cli, ["--ns", memory.ns, *args], catch_exceptions=False)
        assert result.exit_code == 0, result.output
        return result.output

    run("import", str(sample.path("memory.jsonl")), "--json")
    hits = json.loads(run("search", "hotel in Zurich", "-k", "3", "--kind", "record", "--json"))
    assert len(hits) == 3 and hits[0]["uid"] == "turn-03"
    assert all(h["kind"] == "record" and h["version"] == 1 for h in hits)
    assert set(hits[0]["ranks"]) == {"vector", "text"}
    table = run("search", "hotel in Zurich", "-k", "2", "--mode", "text", "--related")
    assert "turn-03@1" in table and "~sum-zurich" in table  # a RELATED neighbour, marked
    report = json.loads(run("reindex", "--json", "--force"))
    assert report["versions"] == 32 and report["embedded"] == 32
    assert json.loads(run("search", "hotel in Zurich", "-k", "1", "--json"))[0]["uid"] == "turn-03"


def _short_index_query(rows: int, name: str = "search_vector_index") -> Query:
    """The index path's query (`name`: alone, or hybrid's), but Neo4j's vector index is
    asked for only `rows` nearest versions whatever `$fetch` says: a real short answer from
    the real index, as Neo4j 5.26 gave under churn (67 rows for every k while 10,070
    versions were embedded)."""
    path = Path(__file__).parents[2] / "cypher" / "serving" / "search" / f"{name}.cypher"
    text = path.read_text(encoding="utf-8")
    asked = "queryNodes('artifact_embedding', $fetch, $vector)"
    assert asked in text
    short = text.replace(asked, f"queryNodes('artifact_embedding', {rows} + 0 * $fetch, $vector)")
    return queries.parse(f"test/short_{name}", short, "tests/integration/test_search.py")


def test_a_short_index_answer_falls_back_to_the_exact_ranking(memory: MemoryStore) -> None:
    memory.import_items(_duplicate_memory())
    memory.flush_embeddings()
    embedder = embedder_for(memory.settings)
    served = {a.uid: a.content for a in memory.retrieve(limit=100)}
    (qv,) = embedder.embed([QUERY])
    vectors = dict(zip(served, embedder.embed(list(served.values())), strict=True))
    exact = sorted(served, key=lambda uid: (-_cosine(qv, vectors[uid]), uid))
    f = filters(memory.ns, searchable=[], **NO_FILTER)
    searcher = Searcher(
        memory.store,
        embedder,
        index_query=_short_index_query(3),
        hybrid_query=_short_index_query(3, "search_hybrid_index"),
    )
    try:
        ranking = searcher.vector(QUERY, 5, f)
        assert [row["uid"] for row in ranking.rows] == exact[:5]
        assert ranking.path.endswith(">all"), ranking.path  # the exact path answered
        hits = searcher.search(QUERY, 5, f, "vector")
        assert [h.uid for h in hits] == exact[:5]
        fused = searcher.hybrid(QUERY, 10, f)  # never words only
        assert [row["uid"] for row in fused["vector"]] == exact[:10]
        assert [h.uid for h in searcher.search(QUERY, 5, f, "hybrid")] == [
            h.uid for h in memory.search(QUERY, 5, mode="hybrid", record_use=False)
        ]  # the same fusion as the full index's
    finally:
        searcher.close()


def _spied(memory: MemoryStore, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the serving queries the store runs from now on (the real server
    answers them; the list only records them)."""
    names: list[str] = []
    serve = memory.store.serve

    def spy(query: Any, **params: Any) -> Any:
        names.append(query.name)
        return serve(query, **params)

    monkeypatch.setattr(memory.store, "serve", spy)
    return names


def test_the_text_index_is_awaited_only_after_this_process_wrote(
    memory: MemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory.record({"uid": "a", "kind": "record", "content": "The kestrel nests on the tower."})
    names = _spied(memory, monkeypatch)
    assert [h.uid for h in memory.search("kestrel tower", mode="text")] == ["a"]
    assert names.count("serving/search/await_text_index") == 1  # it wrote: the index is awaited
    for mode in MODES:  # nothing written since: no search waits
        memory.search("kestrel tower", mode=mode)
    assert names.count("serving/search/await_text_index") == 1
    memory.record({"uid": "b", "kind": "record", "content": "A kestrel hovers over the field."})
    assert {h.uid for h in memory.search("kestrel", mode="text")} == {"a", "b"}  # at once
    assert names.count("serving/search/await_text_index") == 2


@pytest.mark.serial
def test_compacting_the_vector_index_keeps_search_exact_before_during_and_after(
    memory: MemoryStore,
) -> None:
    memory.import_items(_duplicate_memory())
    memory.update("src", content="The launch code for project Falcon is nine nine two.")
    before = _pins(memory, QUERY)
    assert ("src", 2) in before["vector"] and ("src", 1) not in before["vector"]
    # as `compact` does it: dropped, then rebuilt; a search in between is exact anyway
    from memorepair.serving import reindex as reindexing

    f = filters(memory.ns, **NO_FILTER, searchable=[])
    memory.store.write(reindexing.MARK_REBUILD)
    memory.store.write(reindexing.DROP_VECTOR_INDEX)
    try:
        during = _pins(memory, QUERY)  # the index is not asked while the marker stands
        assert memory._searcher.vector(QUERY, 10, f).path == "index:unavailable>all"
        memory.store.write(reindexing.CLEAR_REBUILD)  # a dropped index without the marker:
        assert _pins(memory, QUERY) == before  # the index's error sends it to the exact path
        assert memory._searcher.vector(QUERY, 10, f).path == "index:unavailable>all"
    finally:
        seconds = memory.compact_vector_index()
    assert memory._searcher.vector(QUERY, 10, f).path.startswith("index:")
    assert seconds >= 0
    assert during == before
    assert _pins(memory, QUERY) == before
    done = run_cli(memory.ns, "reindex", "--compact", "--json")  # the same from the CLI
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["compacted"] == "artifact_embedding"
    assert _pins(memory, QUERY) == before


RESHAPED = {"MEMOREPAIR_SEARCH_HNSW_M": "24", "MEMOREPAIR_SEARCH_HNSW_EF_CONSTRUCTION": "120"}


@pytest.mark.serial
def test_the_vector_index_takes_the_configured_hnsw_shape_when_it_is_built(
    memory: MemoryStore, neo4j_settings: Settings
) -> None:
    """`schema apply` builds a missing index with the settings' shape and leaves an existing
    one as it is (saying that it differs); `reindex --compact` builds it with the new one."""
    memory.import_items(_duplicate_memory())
    before = _pins(memory, QUERY)
    default = VectorShape(neo4j_settings.search_hnsw_m, neo4j_settings.search_hnsw_ef_construction)
    assert memory.store.vector_shape() == memory.vector_shape == default
    assert memory.vector_index_drift() is None
    other = neo4j_settings.model_copy(
        update={"search_hnsw_m": 24, "search_hnsw_ef_construction": 120, "search_vector_fetch": 20}
    )
    try:
        with open_store(ns=memory.ns, settings=other) as reshaped:
            reshaped.apply_schema()  # IF NOT EXISTS: the index keeps the shape it was built with
            assert reshaped.store.vector_shape() == default
            drift = reshaped.vector_index_drift()
            assert drift is not None
            assert str(default) in drift and "m 24, ef_construction 120" in drift
            applied = run_cli(memory.ns, "schema", "apply", "--json", **RESHAPED)
            assert applied.returncode == 0, applied.stderr
            assert "memorepair reindex --compact" in applied.stderr
            assert "schema/index_artifact_embedding" in json.loads(applied.stdout)
            done = run_cli(memory.ns, "reindex", "--compact", "--json", **RESHAPED)
            assert done.returncode == 0, done.stderr
            assert json.loads(done.stdout)["m"] == 24
            assert reshaped.store.vector_shape() == VectorShape(24, 120)
            assert reshaped.vector_index_drift() is None
            assert memory.vector_index_drift() is not None  # now the default differs
            assert _pins(reshaped, QUERY) == before
            f = filters(memory.ns, searchable=[], **NO_FILTER)  # the index asked for 20 first
            assert reshaped._searcher.vector(QUERY, 5, f).path.startswith("index:20")
    finally:
        memory.compact_vector_index()
    assert memory.store.vector_shape() == default
    assert _pins(memory, QUERY) == before


def test_recording_use_leaves_searches_without_a_wait(
    memory: MemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Use counts and exposure records are not in the full-text index: flushing them does
    not make the next search await it."""
    memory.record({"uid": "a", "kind": "record", "content": "A kestrel nests in the tower."})
    names = _spied(memory, monkeypatch)
    assert [h.uid for h in memory.search("kestrel tower", mode="text")] == ["a"]
    assert names.count("serving/search/await_text_index") == 1
    writes = memory.store.writes
    assert memory.flush_use() == 1  # the search's use of "a", written now
    assert memory.store.writes == writes
    memory.search("kestrel tower", mode="hybrid")
    assert names.count("serving/search/await_text_index") == 1


def test_text_search_widens_past_versions_no_longer_served(
    memory: MemoryStore, neo4j_settings: Settings, tmp_path: Path
) -> None:
    """Lucene is asked for barely more than k; when withdrawn versions (still current, so
    still in the full-text index) take places in its answer, the search asks again rather
    than return fewer than k, and never returns them."""
    items = [ArtifactIn(uid="src", kind=Kind.RECORD, content="Notes on birds.")]
    cascade = [f"h{i}" for i in range(6)]  # the six best text matches, derived from src
    items += [
        ArtifactIn(uid=uid, kind=Kind.SUMMARY, content="heron " * 30, inputs=["src"])
        for uid in cascade
    ]
    items += [
        ArtifactIn(uid=f"p{i:02d}", kind=Kind.RECORD, content="heron " * (10 - i % 9) + "pond")
        for i in range(12)
    ]
    memory.import_items(items)
    event = write_event(tmp_path, correct_event("herons", "src", "Notes on waders."))
    paused = start_paused(neo4j_settings, memory.ns, event, "herons", "withdrawn")
    try:
        f = filters(memory.ns, **NO_FILTER, searchable=[])
        ranking = memory._searcher.text("heron", 10, f)
        assert ranking.path.startswith("index:12>"), ranking.path  # it had to ask again
        assert len(ranking.rows) == 10
        for mode in MODES:
            hits = memory.search("heron", 10, mode=mode)
            assert len(hits) == 10, mode
            assert not {h.uid for h in hits} & set(cascade), mode
    finally:
        paused.kill()
    assert run_cli(memory.ns, "resume").returncode == 0


@pytest.fixture
def flaky_endpoint(neo4j_settings: Settings) -> Iterator[Settings]:
    with serving() as url:
        yield neo4j_settings.model_copy(
            update={
                "embedding_base_url": url,
                "embedding_model": "flaky",
                "embedding_dimension": 8,
                "record_embedding": "deferred",
            }
        )


def test_a_failed_deferred_embedding_is_raised_and_search_refuses_until_reindex(
    flaky_endpoint: Settings,
) -> None:
    with _store(flaky_endpoint) as memory:
        memory.record({"uid": "first", "kind": "record", "content": "alpha bravo"})
        memory.flush_embeddings()
        assert [h.uid for h in memory.search("alpha", 1, mode="vector")] == ["first"]

        Endpoint.down = True
        memory.record({"uid": "second", "kind": "record", "content": "charlie delta"})
        with pytest.raises(
            EmbeddingError, match=f"could not write vectors of namespace '{memory.ns}'"
        ):
            memory.flush_embeddings()  # the caller that waits for the vectors hears it
        assert memory.retrieve(uid="second")  # served by uid all the same
        assert [h.uid for h in memory.search("charlie", 5, mode="text")] == ["second"]
        Endpoint.down = False  # back up: the query embeds, but `second` has no vector
        for mode in ("vector", "hybrid"):  # never an answer silently missing `second`
            with pytest.raises(EmbeddingError, match="reindex"):
                memory.search("charlie", 5, mode=mode)  # type: ignore[arg-type]

        report = memory.reindex()
        assert (report.versions, report.embedded) == (2, 1)  # only the one left without a vector
        assert "second" in {h.uid for h in memory.search("charlie delta", 2, mode="vector")}


def test_the_cli_prints_the_repair_then_fails_on_vectors_it_could_not_write(
    flaky_endpoint: Settings, tmp_path: Path
) -> None:
    with _store(flaky_endpoint) as memory:
        memory.import_items(fan_memory(4, keep=2))
        memory.flush_embeddings()
        Endpoint.poison = "v2 |"  # the recomputed caches' text; the replacement embeds
        event = write_event(tmp_path, correct_event("vec-fail", "root", "root v2"))
        env = {
            "MEMOREPAIR_EMBEDDING_BASE_URL": str(flaky_endpoint.embedding_base_url),
            "MEMOREPAIR_EMBEDDING_MODEL": "flaky",
            "MEMOREPAIR_EMBEDDING_DIMENSION": "8",
        }
        done = run_cli(memory.ns, "repair", str(event), **env)
        assert done.returncode == 1, (done.stdout, done.stderr)
        assert "completed" in done.stdout  # the report is out first
        assert "the successors are served, their vectors are not" in done.stderr
        assert memory.retrieve(uid="c-0")[0].content.startswith("root v2")
        Endpoint.poison = None
        with pytest.raises(EmbeddingError, match="reindex"):
            memory.search("root v2", 3, mode="vector")
