from __future__ import annotations

import json
import math

import pytest
from operator_support import art, ctx, registry, sup

from memorepair.model import Artifact, EventType, Kind, Recipe
from memorepair.operators.base import Successor
from memorepair.operators.common import OperatorError
from memorepair.operators.executors import embed_text
from memorepair.operators.recompute import RecomputeOperator
from memorepair.sample.tools import currency_migration

REG = registry()
OP = RecomputeOperator(REG)


def cache(recipe: Recipe, inputs: list[str]) -> Artifact:
    return art("cache-1", "old", kind=Kind.CACHE, recipe=recipe, inputs=inputs)


def test_text_join_good_and_deterministic() -> None:
    a = cache(Recipe(executor="text.join", args={"sep": " | "}), ["r1", "r2", "r3"])
    c = ctx(a, [sup("r1", "alpha"), sup("r3", "gamma")])
    s1, s2 = OP.build(c), OP.build(c)
    assert s1 == s2
    assert s1.content == "alpha | gamma" and s1.inputs == ("r1", "r3")
    assert OP.validate(c, s1).ok


def test_replay_changed_output_fails() -> None:
    a = cache(Recipe(executor="text.join"), ["r1"])
    c = ctx(a, [sup("r1", "alpha")])
    good = OP.build(c)
    tampered = Successor(good.content + " plus deleted fact", good.inputs, good.recipe)
    verdict = OP.validate(c, tampered)
    assert not verdict.ok and "replay inconsistent" in verdict.reason


def test_input_outside_support_fails() -> None:
    a = cache(Recipe(executor="text.join"), ["r1", "gone"])
    c = ctx(a, [sup("r1", "alpha")])
    good = OP.build(c)
    tampered = Successor(good.content, (*good.inputs, "gone"), good.recipe)
    verdict = OP.validate(c, tampered)
    assert not verdict.ok and "'gone'" in verdict.reason


def test_missing_executor_fails_validation() -> None:
    a = cache(Recipe(executor="text.join"), ["r1"])
    c = ctx(a, [sup("r1", "alpha")])
    tampered = Successor("alpha", ("r1",), Recipe(executor="gone.away"))
    verdict = OP.validate(c, tampered)
    assert not verdict.ok and "gone.away" in verdict.reason


def test_json_pick_and_positional_refusal() -> None:
    a = cache(Recipe(executor="json.pick", args={"path": "hotel.price"}), ["r1"])
    c = ctx(a, [sup("r1", json.dumps({"hotel": {"price": 120, "name": "X"}}))])
    s = OP.build(c)
    assert s.content == "120" and OP.validate(c, s).ok
    a2 = cache(Recipe(executor="json.pick", args={"path": "x"}), ["r0", "r1"])
    with pytest.raises(OperatorError, match="by position"):
        OP.build(ctx(a2, [sup("r1", "{}")]))
    with pytest.raises(OperatorError, match="missing"):
        OP.build(
            ctx(
                cache(Recipe(executor="json.pick", args={"path": "nope"}), ["r1"]),
                [sup("r1", "{}")],
            )
        )


def test_embed_hash_unit_length_rounded_deterministic() -> None:
    a = cache(Recipe(executor="embed.hash", args={"dim": 32}), ["r1", "r2"])
    c = ctx(a, [sup("r1", "Lisbon hotel near the river"), sup("r2", "budget 120 EUR")])
    s = OP.build(c)
    vec = json.loads(s.content)
    assert len(vec) == 32
    assert math.isclose(math.sqrt(sum(v * v for v in vec)), 1.0, abs_tol=1e-5)
    assert all(round(v, 6) == v for v in vec)
    assert s.content == OP.build(c).content and OP.validate(c, s).ok
    assert embed_text("", 4) == [0.0, 0.0, 0.0, 0.0]
    # the embedding changes when support changes (a deleted record no longer contributes)
    c2 = ctx(a, [sup("r1", "Lisbon hotel near the river")])
    assert OP.build(c2).content != s.content


TOOL_RECIPE = Recipe(
    executor="tool.call",
    args={
        "backend": "currency",
        "function": "convert",
        "args": {"amount": "$input:0.budget", "from_currency": "EUR", "to_currency": "USD"},
    },
)


def test_tool_call_reads_inputs() -> None:
    a = cache(TOOL_RECIPE, ["pref"])
    c = ctx(a, [sup("pref", json.dumps({"budget": 100}))])
    s = OP.build(c)
    assert s.content == "108.0" and OP.validate(c, s).ok
    # a correction's replacement is seen where the root used to be
    c2 = ctx(a, [sup("pref", json.dumps({"budget": 200}), version=2, origin="replacement")])
    assert OP.build(c2).content == "216.0"


def test_tool_call_migrates_recipe() -> None:
    a = cache(TOOL_RECIPE, ["pref"])
    support = [sup("pref", json.dumps({"budget": 100}))]
    c = ctx(a, support, event=EventType.MIGRATE, interface=currency_migration())
    s = OP.build(c)
    assert s.recipe is not None and s.recipe.args["function"] == "convert_amount"
    assert s.recipe.args["args"] == {"value": "$input:0.budget", "source": "EUR", "target": "USD"}
    assert s.content == "108.0" and OP.validate(c, s).ok
    # the stale recipe (not rewritten) does not fit the new interface
    stale = Successor(s.content, s.inputs, TOOL_RECIPE)
    verdict = OP.validate(c, stale)
    assert not verdict.ok and "'convert' is not in the interface" in verdict.reason


def test_migrated_recipe_with_wrong_type_is_refused() -> None:
    bad = Recipe(
        executor="tool.call",
        args={
            "backend": "currency",
            "function": "convert",
            "args": {"amount": "100", "from_currency": "EUR", "to_currency": "USD"},
        },
    )
    c = ctx(cache(bad, []), [], event=EventType.MIGRATE, interface=currency_migration())
    with pytest.raises(OperatorError, match="'value' should be number"):
        OP.build(c)
