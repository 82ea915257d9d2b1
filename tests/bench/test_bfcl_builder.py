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


def test_turns_without_a_user_message_train_nothing() -> None:
    """multi_turn_miss_func: BFCL adds a function at a turn with no user message; its calls
    answer the turn before. That turn is labelled with their tool; the silent one is not,
    and no labelled turn (the router's training text) is empty."""
    from bench.bfcl.builder import silent_turn_text, turn_label
    from bench.bfcl.data import Call, Turn

    ls = Call("GorillaFileSystem", "ls", {})
    turns = (
        Turn(0, "Make a folder.", (Call("GorillaFileSystem", "mkdir", {"dir_name": "t"}),)),
        Turn(1, "Sort the report.", ()),  # unanswered: the function is missing
        Turn(2, "", (Call("GorillaFileSystem", "sort", {"file_name": "r"}),), ("sort",)),
        Turn(3, "What is there?", (ls, Call("MathAPI", "mean", {"numbers": [1]}), ls)),
    )
    assert [turn_label(turns, k) for k in range(4)] == [
        "GorillaFileSystem",
        "GorillaFileSystem",  # from the silent turn after it
        None,
        "GorillaFileSystem",  # the tool called most
    ]
    assert "sort added to the tool set" in silent_turn_text(turns[2])
    memory = build_memory(12, category="multi_turn_miss_func")
    labelled = [a for a in memory.artifacts if a.meta.get("role") == "user" and "label" in a.meta]
    assert labelled and all(a.content.strip() for a in labelled)
    assert all(a.content.strip() for a in memory.artifacts if a.meta.get("role") == "user")


def test_single_turn_categories_are_refused_with_the_reason() -> None:
    from bench.bfcl.data import load_tasks

    from memorepair.errors import InputError

    with pytest.raises(InputError, match=r"'simple_python' cannot be a memory.*multi_turn_base"):
        load_tasks("simple_python")
    assert load_tasks("multi_turn_miss_param")  # every multi-turn category loads
