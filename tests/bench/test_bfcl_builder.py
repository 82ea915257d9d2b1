"""The BFCL memory: deterministic, complete provenance, replayable caches and chains."""

from __future__ import annotations

import json

import pytest

pytest.importorskip(
    "bfcl_eval", reason="bench extra not installed (pip install --no-deps bfcl-eval)"
)
pytest.importorskip("mpmath", reason="bench extra not installed (mpmath, used by MathAPI)")

from bench.bfcl.builder import (
    NEURAL_UID,
    Memory,
    as_support,
    build_memory,
    dump_jsonl,
    make_backends,
    memory_stats,
)
from bench.bfcl.executors import build_cache_content, rewrite_call_record
from bench.bfcl.graph import depth, influence_children, topological_order

from memorepair.model import ArtifactIn, EdgeIn, Kind
from memorepair.operators.neural import NeuralSkill
from memorepair.operators.regen import distill_prompt, summarize


@pytest.fixture(scope="module")
def memory() -> Memory:
    return build_memory(12)


def test_same_n_same_bytes(memory: Memory) -> None:
    assert dump_jsonl(build_memory(12)) == dump_jsonl(memory)
    assert dump_jsonl(build_memory(13)) != dump_jsonl(memory)


def test_jsonl_lines_parse_back_into_the_model(memory: Memory) -> None:
    for line in dump_jsonl(memory).splitlines():
        data = json.loads(line)
        kind = data.pop("type")
        assert (ArtifactIn if kind == "artifact" else EdgeIn).model_validate(data)


def test_provenance_complete_and_a_dag(memory: Memory) -> None:
    children = influence_children(memory.artifacts, memory.edges)  # unknown inputs raise
    assert len(topological_order(children)) == len(memory.artifacts)
    assert depth(children) >= 3
    by_uid = memory.by_uid()
    for a in memory.artifacts:
        if a.kind is not Kind.RECORD or "call" in a.meta:
            assert a.inputs, f"derived artifact {a.uid} has no inputs"
        if "tool" in a.meta and (a.kind is Kind.CACHE or "call" in a.meta or a.arch == "chain"):
            assert f"bfcl/tool/{a.meta['tool']}/interface" in a.inputs
    for e in memory.edges:
        assert e.src in by_uid and e.dst in by_uid


def test_every_kind_and_arch_is_present(memory: Memory) -> None:
    stats = memory_stats(memory)
    assert set(stats["per_kind"]) == {
        "record",
        "cache",
        "summary",
        "skill/chain",
        "skill/prompt",
        "skill/neural",
    }
    assert stats["depth"] >= 3 and stats["related_edges"] > 0


def test_caches_replay_to_their_content(memory: Memory) -> None:
    by_uid = memory.by_uid()
    backends = make_backends(memory.tasks)
    caches = [a for a in memory.artifacts if a.kind is Kind.CACHE]
    assert caches
    for c in caches:
        assert c.recipe is not None and c.recipe.executor == "bfcl.call"
        support = [as_support(by_uid[u]) for u in c.inputs]
        assert build_cache_content(support, c.recipe.args, None, backends) == c.content


def test_call_records_replay_and_chains_execute(memory: Memory) -> None:
    backends = make_backends(memory.tasks)
    for a in memory.artifacts:
        if "call" in a.meta:
            assert a.recipe is not None
            assert rewrite_call_record([], a.recipe.args, None) == a.content
        if a.arch == "chain":
            chain = json.loads(a.content)
            state: dict[str, object] = {"scenario": a.meta["task"]}
            for step in chain["steps"]:
                backends[chain["tool"]].call(step["function"], step["args"], state)


def test_neural_skill_is_trained_on_labelled_user_turns(memory: Memory) -> None:
    neural = memory.by_uid()[NEURAL_UID]
    turns = [memory.by_uid()[u] for u in neural.inputs]
    assert turns and all(t.meta["role"] == "user" and "label" in t.meta for t in turns)
    skill = NeuralSkill.from_json(neural.content)
    assert skill.manifest == tuple(neural.inputs)
    assert skill.predict([turns[0].content]) == [turns[0].meta["label"]]
    seen: list[int] = []
    swapped = build_memory(12, content_for_neural=lambda s: (seen.append(len(s)), "model")[1])
    assert swapped.by_uid()[NEURAL_UID].content == "model" and seen == [len(turns)]


def test_first_versions_are_in_the_regen_format(memory: Memory) -> None:
    by_uid = memory.by_uid()
    for a in memory.artifacts:
        if a.kind is Kind.SUMMARY:
            support = [as_support(by_uid[u]) for u in a.inputs]
            assert a.content == summarize(support)
        if a.arch == "prompt":
            support = [as_support(by_uid[u]) for u in a.inputs]
            assert a.content == distill_prompt(support, a.meta["title"])
