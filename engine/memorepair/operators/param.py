"""``param`` for neural skills: retrain from scratch on the retain partition, check forgetting.

Retain partition: labelled items of the usable support. Forget partition: labelled items
among the invalidated artifacts. Validation checks the manifest, then behaviour: a label
that only the forget partition had is never predicted (on forgotten and retained texts),
the model is not confident on forgotten items with such labels, and retained accuracy
stays at or above ``options["param_min_retain_accuracy"]`` (0.8).
"""

from __future__ import annotations

from memorepair.errors import some
from memorepair.model import Arch, Artifact, Kind, Mode

from .base import RepairContext, Successor, Validation
from .common import OperatorError, option, unknown_inputs
from .neural import NeuralSkill, label_of, labelled, train_neural_skill

DEFAULT_MIN_RETAIN_ACCURACY = 0.8
DEFAULT_FORGET_MAX_CONFIDENCE = 0.5


class ParamOperator:
    name = "param"
    mode = Mode.PARAM

    def accepts(self, artifact: Artifact) -> bool:
        return artifact.kind is Kind.SKILL and artifact.arch is Arch.NEURAL

    def build(self, ctx: RepairContext) -> Successor:
        retain = labelled(ctx.support)
        if not retain:
            raise OperatorError(f"{ctx.artifact.uid}: empty retain partition, nothing to train on")
        return Successor(content=train_neural_skill(retain), inputs=tuple(s.uid for s in retain))

    def validate(self, ctx: RepairContext, successor: Successor) -> Validation:
        try:
            skill = NeuralSkill.from_json(successor.content)
        except OperatorError as exc:
            return Validation(False, f"schema: {exc}")
        invalidated = {a.uid for a in ctx.invalidated}
        leaked = sorted(set(skill.manifest) & invalidated)
        if leaked:
            return Validation(False, f"forget: manifest includes invalidated records {leaked}")
        stray = unknown_inputs(ctx, (*skill.manifest, *successor.inputs))
        if stray:
            return Validation(False, f"support: {some(stray, 'manifest/input')} not usable support")
        retain = labelled(ctx.support)
        if not retain:
            return Validation(False, "retain: empty retain partition")
        forget = [(a.content, lab) for a in ctx.invalidated if (lab := label_of(a.meta))]
        retained_labels = {str(s.meta["label"]) for s in retain}
        forget_only = {lab for _, lab in forget if lab not in retained_labels}
        texts = [t for t, _ in forget] + [s.content for s in retain]
        reproduced = sorted({p for p in skill.predict(texts) if p in forget_only})
        if reproduced:
            return Validation(False, f"forget: still predicts forgotten label(s) {reproduced}")
        gone = [(t, lab) for t, lab in forget if lab in forget_only]
        if gone:
            conf = skill.confidence([t for t, _ in gone], [lab for _, lab in gone])
            mean = sum(conf) / len(conf)
            limit = float(option(ctx, "param_forget_max_confidence", DEFAULT_FORGET_MAX_CONFIDENCE))
            if mean >= limit:
                return Validation(
                    False, f"forget: mean confidence {mean:.3f} on forgotten items >= {limit}"
                )
        predicted = skill.predict([s.content for s in retain])
        accuracy = sum(p == s.meta["label"] for p, s in zip(predicted, retain, strict=True)) / len(
            retain
        )
        minimum = float(option(ctx, "param_min_retain_accuracy", DEFAULT_MIN_RETAIN_ACCURACY))
        if accuracy < minimum:
            return Validation(False, f"retain: accuracy {accuracy:.3f} < {minimum}")
        return Validation(True)
