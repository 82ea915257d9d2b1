"""bench.bfcl.retrain: the router's repair after a turn deletion, as the benchmark runs it."""

from __future__ import annotations

import json

import pytest

pytest.importorskip(
    "bfcl_eval", reason="bench extra not installed (pip install --no-deps bfcl-eval)"
)
pytest.importorskip("mpmath", reason="bench extra not installed (mpmath, used by MathAPI)")

from bench.bfcl import retrain

from memorepair.operators.neural import train_neural_skill
from memorepair.operators.param import ParamOperator


def test_each_deletion_leaves_the_router_without_that_turn() -> None:
    tasks, examples, contexts = retrain.contexts("multi_turn_base", 6, 3)
    assert tasks == 6 and len(contexts) == 3
    gone = {c.invalidated[0].uid for c in contexts}
    assert len(gone) == 3
    op = ParamOperator()
    for ctx in contexts:
        assert len(ctx.support) == examples - 1
        assert ctx.invalidated[0].uid not in {s.uid for s in ctx.support}
        successor = op.build(ctx)
        assert op.validate(ctx, successor).ok
        assert successor.content == train_neural_skill(list(ctx.support))
        assert ctx.invalidated[0].uid not in json.loads(successor.content)["manifest"]


def test_the_table_reports_validated_from_scratch_retrains(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert retrain.main(["--tasks", "6", "--deletes", "2", "--repeats", "1", "--json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)
    assert row["tasks"] == 6 and row["deletes"] == 2 and row["examples"] > 0
    assert row["validated"] is True and row["from_scratch"] is True
    assert row["total_s"] >= row["build_s"] > 0
