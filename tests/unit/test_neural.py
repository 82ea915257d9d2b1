from __future__ import annotations

import json
import threading
import time

import numpy as np
import pytest
from operator_support import art, as_artifact, ctx, sup
from threadpoolctl import ThreadpoolController

from memorepair.model import Arch, Kind
from memorepair.operators.base import RepairContext, Successor, Support
from memorepair.operators.common import OperatorError, hashed_counts
from memorepair.operators.neural import (
    NeuralSkill,
    featurize,
    one_blas_thread,
    train,
    train_neural_skill,
)
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


# -- the retrain's arithmetic, and what a retrain keeps of forgotten examples ----------


def reference_features(texts: list[str], dim: int) -> np.ndarray:
    """The feature rows straight from their definition (``hashed_counts``, L2-normalised)."""
    rows = np.array([hashed_counts(t, dim) for t in texts], dtype=np.float64).reshape(-1, dim)
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    return np.asarray(rows / np.where(norms > 0, norms, 1.0))


def reference_train(
    texts: list[str], labels: list[str], dim: int = 64, steps: int = 40
) -> tuple[tuple[str, ...], np.ndarray, np.ndarray]:
    """Plain full-batch gradient descent, row by row: the definition the trainer must match."""
    classes = tuple(sorted(set(labels)))
    x = reference_features(texts, dim)
    w, b = np.zeros((dim, len(classes))), np.zeros(len(classes))
    for _ in range(steps):
        gw, gb = np.zeros_like(w), np.zeros_like(b)
        for row, label in zip(x, labels, strict=True):
            z = row @ w + b
            p = np.exp(z - z.max()) / np.exp(z - z.max()).sum()
            p[classes.index(label)] -= 1.0
            gw += np.outer(row, p) / len(texts)
            gb += p / len(texts)
        w = w - 2.0 * (gw + 1e-4 * w)
        b = b - 2.0 * gb
    return classes, w, b


def test_features_match_their_definition() -> None:
    texts = [
        "book a flight to Lisbon, then a flight back",
        "",
        "?! ...",
        "visa visa visa for rome",
        *(r.content for r in RETAIN[:40]),
    ]
    np.testing.assert_array_equal(featurize(texts, 64), reference_features(texts, 64))
    assert featurize([], 64).shape == (0, 64)
    assert not featurize([""], 64).any()


def test_trainer_is_the_gradient_descent_it_defines() -> None:
    items = RETAIN[::8] + FORGET[::4]
    texts, labels = [s.content for s in items], [str(s.meta["label"]) for s in items]
    classes, w, b = train(texts, labels, dim=64, steps=40)
    ref_classes, ref_w, ref_b = reference_train(texts, labels)
    assert classes == ref_classes
    np.testing.assert_allclose(w, ref_w, rtol=0, atol=1e-12)
    np.testing.assert_allclose(b, ref_b, rtol=0, atol=1e-12)


def test_retrain_never_starts_from_the_old_weights() -> None:
    """The successor is the same whatever the withdrawn router held, so a router trained
    on the forgotten examples hands nothing of them on."""
    leaky = art("router", train_neural_skill(RETAIN + FORGET), kind=Kind.SKILL, arch=Arch.NEURAL)
    blank = art("router", "{}", kind=Kind.SKILL, arch=Arch.NEURAL)
    forget = [as_artifact(r) for r in FORGET]
    built = [OP.build(ctx(a, RETAIN + UNLABELLED, [*forget, a])).content for a in (leaky, blank)]
    assert built[0] == built[1] == train_neural_skill(RETAIN)


def test_a_forgotten_example_with_a_retained_label_leaves_no_trace() -> None:
    """Deleting one example whose label others keep (the label checks cannot see it): the
    successor is exactly the model trained from scratch on the rest, not the one with it."""
    gone = sup("odd-1", "exchange rate for zloty in krakow tonight", meta={"label": "currency"})
    with_it = train_neural_skill([*RETAIN, gone])
    c = ctx(SKILL, RETAIN, [as_artifact(gone), SKILL])
    successor = OP.build(c)
    assert OP.validate(c, successor).ok
    assert successor.content == train_neural_skill(RETAIN) != with_it
    assert gone.uid not in json.loads(successor.content)["manifest"]
    probe = ["zloty krakow"]
    after = NeuralSkill.from_json(successor.content).proba(probe)
    assert not np.allclose(after, NeuralSkill.from_json(with_it).proba(probe), atol=1e-3)


def blas_threads() -> list[int]:
    info = ThreadpoolController().info()
    return [int(lib["num_threads"]) for lib in info if lib["user_api"] == "blas"]


def test_training_holds_blas_to_one_thread_and_restores_it() -> None:
    """Also from another thread after this one trained (threadpoolctl lets one thread hold
    the limit at a time, so each block must hand it back), and one block at a time."""
    before = blas_threads()
    train_neural_skill(RETAIN[:20])  # this thread held the limit once, and handed it back
    assert blas_threads() == before
    log: list[str] = []
    seen: list[list[int]] = []

    def worker() -> None:
        with one_blas_thread():
            log.append("worker in")
            seen.append(blas_threads())
        seen.append(blas_threads())

    with one_blas_thread():
        thread = threading.Thread(target=worker)
        thread.start()
        time.sleep(0.3)  # time for the worker to get in, were the blocks not serialised
        log.append("main out")
        seen.append(blas_threads())
    thread.join(10)
    assert not thread.is_alive() and log == ["main out", "worker in"]
    assert seen[:2] == [[1] * len(before)] * 2 and seen[2] == before, (seen, before)
    assert blas_threads() == before
