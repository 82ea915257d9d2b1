from __future__ import annotations

import json

import pytest
from operator_support import art, as_artifact, ctx, sup

from memorepair.model import Arch, Kind
from memorepair.operators.base import RepairContext, Successor, Support
from memorepair.operators.common import OperatorError
from memorepair.operators.neural import NeuralSkill, train_neural_skill
from memorepair.operators.param import ParamOperator
from memorepair.settings import OperatorConfig

OP = ParamOperator()

TEMPLATES = {
    "currency": [
        "convert {n} euros to dollars",
        "how much is {n} GBP in yen",
        "exchange rate for {n} francs",
    ],
    "flights": [
        "book a flight to {c} on day {n}",
        "find flights from {c} leaving {n}",
        "cheapest plane ticket {c}",
    ],
    "hotels": [
        "hotel room in {c} for {n} nights",
        "find a hotel near {c} centre",
        "book accommodation {c} {n}",
    ],
    "weather": [
        "weather forecast for {c} tomorrow",
        "will it rain in {c} on day {n}",
        "temperature in {c}",
    ],
}
FORGOTTEN = [
    "do i need a visa for {c}",
    "visa requirements to enter {c}",
    "apply for a {c} visa {n}",
]
CITIES = ["lisbon", "porto", "madrid", "paris", "rome", "berlin", "vienna", "prague"]


def records(label: str, templates: list[str], count: int, prefix: str) -> list[Support]:
    out = []
    for i in range(count):
        text = templates[i % len(templates)].format(n=i, c=CITIES[i % len(CITIES)])
        out.append(sup(f"{prefix}{i}", text, meta={"label": label}))
    return out


RETAIN = [r for label, t in TEMPLATES.items() for r in records(label, t, 240, f"{label[:2]}-")]
FORGET = records("visa", FORGOTTEN, 40, "visa-")
UNLABELLED = [sup("note-1", "user said hello")]
SKILL = art("router", kind=Kind.SKILL, arch=Arch.NEURAL)


def param_ctx() -> RepairContext:
    invalidated = [as_artifact(r) for r in FORGET] + [SKILL]
    return ctx(SKILL, RETAIN + UNLABELLED, invalidated)


def test_training_is_deterministic() -> None:
    a = train_neural_skill(RETAIN + FORGET)
    assert a == train_neural_skill(RETAIN + FORGET)
    doc = json.loads(a)
    assert doc["classes"] == ["currency", "flights", "hotels", "visa", "weather"]
    assert len(doc["weights"]) == doc["dim"] and len(doc["weights"][0]) == 5
    assert len(doc["manifest"]) == len(RETAIN) + len(FORGET)
    skill = NeuralSkill.from_json(a)
    assert skill.predict(["do i need a visa for rome", "convert 5 euros to dollars"]) == [
        "visa",
        "currency",
    ]


def test_param_retrains_on_retain_partition_only() -> None:
    c = param_ctx()
    s = OP.build(c)
    assert s == OP.build(c)
    assert set(s.inputs) == {r.uid for r in RETAIN}
    assert "visa" not in json.loads(s.content)["classes"]
    assert OP.validate(c, s).ok


def test_model_trained_with_forgotten_records_fails() -> None:
    c = param_ctx()
    leaky = train_neural_skill(RETAIN + FORGET)
    verdict = OP.validate(c, Successor(leaky, tuple(r.uid for r in RETAIN)))
    assert not verdict.ok and "manifest includes invalidated" in verdict.reason


def test_lying_manifest_is_caught_by_behaviour() -> None:
    c = param_ctx()
    doc = json.loads(train_neural_skill(RETAIN + FORGET))
    doc["manifest"] = [r.uid for r in RETAIN]
    verdict = OP.validate(c, Successor(json.dumps(doc), tuple(doc["manifest"])))
    assert not verdict.ok and "still predicts 1 forgotten label ('visa')" in verdict.reason


def test_confident_on_forgotten_items_fails() -> None:
    c = param_ctx()
    strict = ParamOperator(OperatorConfig(param_forget_max_confidence=0.0))
    doc = json.loads(train_neural_skill(RETAIN + FORGET))
    doc["manifest"] = [r.uid for r in RETAIN]
    # never argmax "visa" (bias pushed down), yet still gives it probability mass
    visa = doc["classes"].index("visa")
    doc["bias"][visa] -= 50.0
    verdict = strict.validate(c, Successor(json.dumps(doc), tuple(doc["manifest"])))
    assert not verdict.ok and "mean confidence" in verdict.reason


def test_poor_retained_accuracy_fails() -> None:
    c = param_ctx()
    doc = json.loads(OP.build(c).content)
    doc["weights"] = [[0.0] * len(doc["classes"]) for _ in doc["weights"]]
    doc["bias"] = [1.0] + [0.0] * (len(doc["classes"]) - 1)
    verdict = OP.validate(c, Successor(json.dumps(doc), tuple(doc["manifest"])))
    assert not verdict.ok and "retain: accuracy" in verdict.reason


def test_manifest_outside_support_and_bad_schema_fail() -> None:
    c = param_ctx()
    doc = json.loads(OP.build(c).content)
    doc["manifest"].append("stranger")
    assert "stranger" in OP.validate(c, Successor(json.dumps(doc), ())).reason
    assert "schema" in OP.validate(c, Successor("{}", ())).reason
    doc["weights"] = doc["weights"][:3]
    assert "shapes disagree" in OP.validate(c, Successor(json.dumps(doc), ())).reason


def test_empty_retain_partition() -> None:
    c = ctx(SKILL, UNLABELLED, [as_artifact(r) for r in FORGET])
    with pytest.raises(OperatorError, match="empty retain partition"):
        OP.build(c)
    assert OP.accepts(SKILL) and not OP.accepts(art("p", kind=Kind.SKILL, arch=Arch.PROMPT))
