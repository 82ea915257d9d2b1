"""``param`` for neural skills: retrain from scratch on the retain partition, check forgetting.

Retain partition: labelled items of the usable support. Forget partition: labelled items
among the invalidated artifacts. Validation checks the manifest, then behaviour: a label
that only the forget partition had is never predicted (on forgotten and retained texts),
the model is not confident on forgotten items with such labels, and retained accuracy
stays at or above ``OperatorConfig.param_min_retain_accuracy`` (0.8).
"""

from __future__ import annotations

from collections.abc import Sequence

from memorepair.errors import some
from memorepair.model import Arch, Artifact, Kind, Mode
from memorepair.settings import OperatorConfig

from .base import RepairContext, Successor, Support, Validation
from .common import OperatorError, unknown_inputs
from .neural import NeuralSkill, label_of, labelled, train_neural_skill


class ParamOperator:
    name = "param"
    mode = Mode.PARAM

    def __init__(self, config: OperatorConfig | None = None) -> None:
        self._config = config or OperatorConfig()

    def accepts(self, artifact: Artifact) -> bool:
        return artifact.kind is Kind.SKILL and artifact.arch is Arch.NEURAL

    def build(self, ctx: RepairContext) -> Successor:
        retain = labelled(ctx.support)
        if not retain:
            raise OperatorError(f"{ctx.artifact.uid}: empty retain partition, nothing to train on")
        return Successor(content=train_neural_skill(retain), inputs=tuple(s.uid for s in retain))

    def validate(self, ctx: RepairContext, successor: Successor) -> Validation:
        """The manifest first, then behaviour: forgetting, confidence, retained accuracy."""
        try:
            skill = NeuralSkill.from_json(successor.content)
        except OperatorError as exc:
            return Validation(False, f"schema: {exc}")
        problem = _manifest_problem(ctx, skill, successor) or self._behaviour_problem(ctx, skill)
        return Validation(False, problem) if problem else Validation(True)

    def _behaviour_problem(self, ctx: RepairContext, skill: NeuralSkill) -> str | None:
        """One prediction pass over the forgotten and retained texts serves both checks."""
        retain = labelled(ctx.support)
        if not retain:
            return "retain: empty retain partition"
        forget = [(a.content, lab) for a in ctx.invalidated if (lab := label_of(a.meta))]
        predicted = skill.predict([t for t, _ in forget] + [s.content for s in retain])
        return self._forget_problem(skill, forget, retain, predicted) or self._retain_problem(
            retain, predicted[len(forget) :]
        )

    def _forget_problem(
        self,
        skill: NeuralSkill,
        forget: Sequence[tuple[str, str]],
        retain: Sequence[Support],
        predicted: Sequence[str],
    ) -> str | None:
        """Labels only the forget partition had are never predicted, nor held with confidence."""
        retained_labels = {str(s.meta["label"]) for s in retain}
        gone = [(t, lab) for t, lab in forget if lab not in retained_labels]
        forget_only = {lab for _, lab in gone}
        reproduced = sorted({p for p in predicted if p in forget_only})
        if reproduced:
            return f"forget: still predicts {some(reproduced, 'forgotten label')}"
        limit = self._config.param_forget_max_confidence
        if gone and (mean := _mean(skill.confidence(*zip(*gone, strict=True)))) >= limit:
            return f"forget: mean confidence {mean:.3f} on forgotten items >= {limit}"
        return None

    def _retain_problem(self, retain: Sequence[Support], predicted: Sequence[str]) -> str | None:
        accuracy = _mean([p == s.meta["label"] for p, s in zip(predicted, retain, strict=True)])
        minimum = self._config.param_min_retain_accuracy
        if accuracy < minimum:
            return f"retain: accuracy {accuracy:.3f} < {minimum}"
        return None


def _manifest_problem(ctx: RepairContext, skill: NeuralSkill, successor: Successor) -> str | None:
    """The manifest names uids: a corrected record keeps its uid, and its replacement (in
    the support) is what the successor trained on, so only invalidated uids without a
    usable version count as leaked."""
    usable = {s.uid for s in ctx.support}
    leaked = sorted(set(skill.manifest) & ({a.uid for a in ctx.invalidated} - usable))
    if leaked:
        return f"forget: manifest includes invalidated {some(leaked, 'record')}"
    stray = unknown_inputs(ctx, (*skill.manifest, *successor.inputs))
    if stray:
        return f"support: {some(stray, 'manifest/input')} not usable support"
    return None


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values)
