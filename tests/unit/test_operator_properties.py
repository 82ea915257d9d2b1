"""Property tests: for any support, built successors validate and builds are reproducible."""

from __future__ import annotations

import json
import math

from hypothesis import given, settings
from hypothesis import strategies as st
from operator_support import art, as_artifact, ctx, registry, sup

from memorepair.model import Arch, Kind, Recipe
from memorepair.operators.base import Support
from memorepair.operators.chain import chain_from_calls, parse_chain
from memorepair.operators.common import PhraseIndex, _ngrams, flat_words, shared_words, words
from memorepair.operators.executors import embed_text
from memorepair.operators.recompute import RecomputeOperator
from memorepair.operators.regen import RegenOperator

TEXT = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=400)


@st.composite
def supports(draw: st.DrawFn) -> list[Support]:
    texts = draw(st.lists(TEXT, min_size=1, max_size=8))
    versions = draw(st.lists(st.integers(1, 5), min_size=len(texts), max_size=len(texts)))
    instructions = draw(st.lists(st.none() | TEXT, min_size=len(texts), max_size=len(texts)))
    return [
        sup(f"r{i}", t, version=v, meta={} if ins is None else {"instruction": ins})
        for i, (t, v, ins) in enumerate(zip(texts, versions, instructions, strict=True))
    ]


@settings(max_examples=60, deadline=None)
@given(supports(), st.lists(TEXT, max_size=3), st.booleans())
def test_regen_successor_always_validates(
    support: list[Support], gone: list[str], prompt: bool
) -> None:
    op = RegenOperator()
    artifact = (
        art("skill", kind=Kind.SKILL, arch=Arch.PROMPT, meta={"title": "T"})
        if prompt
        else art("sum", kind=Kind.SUMMARY)
    )
    invalidated = [as_artifact(sup(f"gone{i}", t)) for i, t in enumerate(gone)]
    c = ctx(artifact, support, invalidated)
    s = op.build(c)
    assert s == op.build(c)
    verdict = op.validate(c, s)
    assert verdict.ok, verdict.reason


@settings(max_examples=60, deadline=None)
@given(TEXT, st.integers(1, 128))
def test_embedding_is_unit_or_zero(text: str, dim: int) -> None:
    vec = embed_text(text, dim)
    norm = math.sqrt(sum(v * v for v in vec))
    assert len(vec) == dim and (norm == 0.0 or math.isclose(norm, 1.0, abs_tol=1e-5))


@settings(max_examples=40, deadline=None)
@given(supports(), st.sampled_from(["text.join", "embed.hash"]))
def test_recompute_replays_consistently(support: list[Support], executor: str) -> None:
    op = RecomputeOperator(registry())
    artifact = art("c", kind=Kind.CACHE, recipe=Recipe(executor=executor))
    c = ctx(artifact, support)
    s = op.build(c)
    assert op.validate(c, s).ok


@given(st.lists(st.dictionaries(st.text(max_size=5), st.integers() | st.text(max_size=5))))
def test_chain_round_trip(calls: list[dict[str, object]]) -> None:
    support = [
        sup(f"c{i}", "", meta={"tool": "t", "call": {"function": f"f{i}", "args": a}})
        for i, a in enumerate(calls)
    ]
    tool, steps = parse_chain(chain_from_calls(support, "t"))
    assert tool == "t" and [s["args"] for s in steps] == calls
    assert json.loads(chain_from_calls(support, "t"))["steps"] == steps


WORDS = st.lists(st.sampled_from(["a", "b", "ab", "ba", "Σας", "ς", "_", "1"]), max_size=12)
SEPARATORS = st.sampled_from([" ", "  ", "\n", ", ", "-", "'"])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(WORDS, SEPARATORS), min_size=1, max_size=4), WORDS, st.integers(1, 4))
def test_phrase_index_holds_exactly_the_texts_with_the_word_ngram(
    texts: list[tuple[list[str], str]], query: list[str], n: int
) -> None:
    """The index's substring test over flattened words is the n-gram test it replaced:
    a text holds a gram exactly when the gram is n consecutive words of it (no partial
    words, across any separators), with or without the words shared in a block."""
    built = {f"t{i}": sep.join(ws) for i, (ws, sep) in enumerate(texts)}
    grams = {tuple(query[i : i + n]) for i in range(len(query) - n + 1)}
    plain = PhraseIndex(built.items())
    with shared_words():  # as in a repair: each text split once, for every index
        shared = [PhraseIndex(built.items()), PhraseIndex(built.items())]
        for gram in sorted(grams):
            expected = [k for k, text in built.items() if gram in _ngrams(words(text), len(gram))]
            assert plain.holders(gram) == expected
            assert [index.holders(gram) for index in shared] == [expected, expected]


def test_shared_words_split_a_text_once_and_forget_it_after_the_block() -> None:
    text = "An interface record that every call of its tool is checked against"
    with shared_words():
        first = flat_words(text)
        assert flat_words(text) is first  # split once in the block
        with shared_words():  # a nested block shares the outer one's
            assert flat_words(text) is first
    assert first == " an interface record that every call of its tool is checked against "
    assert flat_words(text) is not first  # nothing kept after the block
