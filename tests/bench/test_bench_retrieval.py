"""bench.retrieval's metrics and evidence labels (pure; the data test needs bfcl-eval)."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import pytest
from bench.retrieval import Turn, _evidence, load_questions, load_turns, ndcg_at, recall_at

ROOT = Path(__file__).resolve().parents[2]


def test_recall_and_ndcg_of_one_relevant_turn() -> None:
    relevant = frozenset({"b"})
    assert recall_at(["a", "b", "c"], relevant, 1) == 0.0
    assert recall_at(["a", "b", "c"], relevant, 2) == 1.0
    assert ndcg_at(["b", "a"], relevant, 10) == 1.0
    assert math.isclose(ndcg_at(["a", "b"], relevant, 10), 1 / math.log2(3))
    assert ndcg_at(["a", "c"], relevant, 10) == 0.0


def test_evidence_is_the_turn_holding_every_fragment_of_the_source() -> None:
    turns = [
        Turn("x/t0", "s", "x", "Hi! My name is Michael \u2014 I live in Seattle."),
        Turn("x/t1", "s", "x", "I live in Portland now, and my name is not relevant."),
    ]
    assert _evidence('"My name is Michael - I live..."', turns) == {"x/t0"}
    assert _evidence("nothing like this at all anywhere", turns) == frozenset()


def test_every_question_of_the_packaged_set_has_an_evidence_turn_of_its_persona() -> None:
    pytest.importorskip("bfcl_eval")
    turns = load_turns()
    questions, dropped = load_questions(turns)
    persona = {t.uid: t.scenario for t in turns}
    assert dropped == 0 and len(questions) == 155
    assert all(persona[uid] == q.scenario for q in questions for uid in q.evidence)


def test_help_names_the_data_its_licence_and_the_options() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "bench.retrieval", "-h"], cwd=ROOT, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    for text in ("bfcl-eval", "Apache-2.0", "--questions", "--updates", "--scopes", "bm25s"):
        assert text in result.stdout
