"""The repair window against the real Neo4j: successors go live before their vectors (the
embedding writer adds them just after publication, reusing an unchanged predecessor's)
and this process's searches wait for them. A kill in between, and what other processes
search meanwhile: tests/integration/test_faults.py (killed after "published")."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from bench.perf import NoOpOperator
from reliability_support import correct_event, fan_memory, vectors

from memorepair import cascade, publication
from memorepair.api import MemoryStore, open_store
from memorepair.embedding import WordLlamaEmbedder
from memorepair.model import Mode

WIDTH = 40


def _caches(state: dict[tuple[str, int], tuple[str, list[float] | None]], version: int) -> dict:
    return {k[0]: v for k, v in state.items() if k[0].startswith("c-") and k[1] == version}


def test_successors_are_published_first_and_indexed_after(memory: MemoryStore) -> None:
    assert memory.settings.record_embedding == "deferred"
    memory.import_items(fan_memory(WIDTH))
    memory.flush_embeddings()
    seen: dict[str, dict] = {}

    def progress(step: str, done: int, total: int) -> None:
        if step == "publication" and done == 0:  # every batch written, the event still open
            seen["published"] = _caches(vectors(memory), 2)
            seen["superseded"] = _caches(vectors(memory), 1)

    report = memory.repair(correct_event("e1", "root", "root v2"), progress=progress)
    assert len(report.published) == WIDTH
    assert {vis for vis, _ in seen["published"].values()} == {"Live"}
    assert all(vec is None for _, vec in seen["published"].values())  # served, no vector yet
    assert all(vec is not None for _, vec in seen["superseded"].values())  # the writer's job

    hits = memory.search("root v2 retained 3", 5, mode="vector")  # waits for this process's
    assert hits and all(h.version == 2 for h in hits if h.uid.startswith("c-"))
    lags = memory.embedding_lags()  # each successor's vector landed after its publication
    assert len(lags) >= WIDTH and min(lags) > 0
    state = vectors(memory)
    assert all(vis == "Live" and vec is not None for vis, vec in _caches(state, 2).values())
    assert all(vis == "Superseded" and vec is None for vis, vec in _caches(state, 1).values())


def test_an_unchanged_successor_reuses_its_predecessors_vector(
    memory: MemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory.import_items(fan_memory(WIDTH))
    memory.flush_embeddings()
    before = _caches(vectors(memory), 1)
    embedded: list[str] = []
    real = WordLlamaEmbedder.embed

    def counting(self: WordLlamaEmbedder, texts: Sequence[str]) -> list[list[float]]:
        embedded.extend(texts)
        return real(self, texts)

    monkeypatch.setattr(WordLlamaEmbedder, "embed", counting)
    memory.register_operator(NoOpOperator(Mode.RECOMPUTE), first=True)  # content unchanged
    report = memory.repair(correct_event("e1", "root", "root v2"))
    assert len(report.published) == WIDTH
    memory.flush_embeddings()
    assert not [text for text in embedded if text.startswith("root v1 |")]  # none computed
    after = _caches(vectors(memory), 2)
    assert after.keys() == before.keys()
    for uid, (vis, vec) in after.items():
        assert vis == "Live" and vec == before[uid][1], uid  # the predecessor's, copied
    assert all(vec is None for _, vec in _caches(vectors(memory), 1).values())
    hits = memory.search("root v1 retained 7", WIDTH, mode="vector")
    assert {h.version for h in hits if h.uid.startswith("c-")} == {2}


def test_the_pace_rests_the_repairs_writer_after_each_batch(
    memory: MemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory.import_items(fan_memory(WIDTH))
    rests: list[tuple[str, float]] = []
    monkeypatch.setattr(publication, "rest", lambda took, pace: rests.append(("publish", pace)))
    monkeypatch.setattr(cascade, "rest", lambda took, pace: rests.append(("record", pace)))
    paced = memory.settings.model_copy(update={"repair_pace": 0.5, "repair_batch": 10})
    with open_store(ns=memory.ns, settings=paced) as store:
        report = store.repair(correct_event("e1", "root", "root v2"))
    assert len(report.published) == WIDTH
    batches = -(-WIDTH // 10)  # the candidates' facts and the successors, 10 a batch each
    assert rests == [("record", 0.5)] * batches + [("publish", 0.5)] * batches
