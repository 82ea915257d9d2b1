"""Neural skills: a small softmax classifier over hashed bag-of-words features (numpy).

It maps a record's text to its ``meta["label"]`` (e.g. which tool a user turn calls).
Training is full-batch gradient descent from zero weights, a fixed number of steps, so it
is deterministic without a seed and takes milliseconds on ~1000 records. Content is
canonical JSON::

    {"format": "memorepair.neural/softmax-1", "dim": int, "classes": [label, ...],
     "weights": [[float] * len(classes)] * dim, "bias": [float] * len(classes),
     "manifest": [training record uid, ...],
     "train": {"steps": int, "lr": float, "l2": float}}

Weights are rounded to 6 decimals; predictions always use the rounded (stored) weights.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from memorepair.codec import canonical_json

from .base import Support
from .common import OperatorError, hashed_counts, parse_json

FORMAT = "memorepair.neural/softmax-1"
DEFAULT_DIM = 256
DEFAULT_STEPS = 300
DEFAULT_LR = 2.0
DEFAULT_L2 = 1e-4

Matrix = npt.NDArray[np.float64]


@dataclass(frozen=True)
class Features:
    """L2-normalised hashed bag-of-words rows, stored sparse (a text has few distinct words).

    Products are segment sums with ``np.add.at`` rather than BLAS matrix products: on a busy
    small machine a multi-threaded BLAS call on these thin matrices was measured 30x slower
    than the single-threaded work, and the sparse form does ~dim/words times less work.
    """

    rows: npt.NDArray[np.intp]
    cols: npt.NDArray[np.intp]
    vals: Matrix
    n: int
    dim: int

    @classmethod
    def of(cls, texts: Sequence[str], dim: int) -> Features:
        rows: list[int] = []
        cols: list[int] = []
        vals: list[float] = []
        for r, text in enumerate(texts):
            vec = hashed_counts(text, dim)
            nz = [(c, v) for c, v in enumerate(vec) if v != 0.0]
            norm = float(np.sqrt(sum(v * v for _, v in nz)))
            for c, v in nz:
                rows.append(r)
                cols.append(c)
                vals.append(v / norm)
        return cls(
            np.array(rows, dtype=np.intp),
            np.array(cols, dtype=np.intp),
            np.array(vals, dtype=np.float64),
            len(texts),
            dim,
        )

    def dot(self, w: Matrix) -> Matrix:
        """X @ w for w of shape (dim, k)."""
        out = np.zeros((self.n, w.shape[1]))
        np.add.at(out, self.rows, self.vals[:, None] * w[self.cols])
        return out

    def tdot(self, g: Matrix) -> Matrix:
        """X.T @ g for g of shape (n, k)."""
        out = np.zeros((self.dim, g.shape[1]))
        np.add.at(out, self.cols, self.vals[:, None] * g[self.rows])
        return out


def softmax(z: Matrix) -> Matrix:
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return np.asarray(e / e.sum(axis=1, keepdims=True), dtype=np.float64)


def labelled(support: Sequence[Support]) -> list[Support]:
    """The items a neural skill trains on: those whose meta carries a string label."""
    return [s for s in support if isinstance(s.meta.get("label"), str)]


def label_of(meta: Mapping[str, Any]) -> str | None:
    label = meta.get("label")
    return label if isinstance(label, str) else None


@dataclass(frozen=True)
class NeuralSkill:
    dim: int
    classes: tuple[str, ...]
    weights: Matrix
    bias: Matrix
    manifest: tuple[str, ...]

    def proba(self, texts: Sequence[str]) -> Matrix:
        return softmax(Features.of(texts, self.dim).dot(self.weights) + self.bias)

    def predict(self, texts: Sequence[str]) -> list[str]:
        if not texts:
            return []
        return [self.classes[i] for i in self.proba(texts).argmax(axis=1)]

    def confidence(self, texts: Sequence[str], labels: Sequence[str]) -> list[float]:
        """Probability the model gives each text's label (0 for a label it does not know)."""
        if not texts:
            return []
        p = self.proba(texts)
        index = {c: i for i, c in enumerate(self.classes)}
        return [float(p[r, index[lab]]) if lab in index else 0.0 for r, lab in enumerate(labels)]

    @classmethod
    def from_json(cls, text: str) -> NeuralSkill:
        ok, doc = parse_json(text)
        if not ok or not isinstance(doc, dict) or doc.get("format") != FORMAT:
            raise OperatorError(f"neural skill content is not {FORMAT!r} JSON")
        try:
            dim, classes = int(doc["dim"]), tuple(str(c) for c in doc["classes"])
            weights = np.array(doc["weights"], dtype=np.float64)
            bias = np.array(doc["bias"], dtype=np.float64)
            manifest = tuple(str(u) for u in doc["manifest"])
        except (KeyError, TypeError, ValueError) as exc:
            raise OperatorError(f"neural skill content is malformed: {exc}") from exc
        if weights.shape != (dim, len(classes)) or bias.shape != (len(classes),):
            raise OperatorError(
                f"neural skill shapes disagree: weights {weights.shape}, bias {bias.shape}, "
                f"dim {dim}, {len(classes)} classes"
            )
        return cls(dim, classes, weights, bias, manifest)


def train(
    texts: Sequence[str],
    labels: Sequence[str],
    *,
    dim: int = DEFAULT_DIM,
    steps: int = DEFAULT_STEPS,
    lr: float = DEFAULT_LR,
    l2: float = DEFAULT_L2,
) -> tuple[tuple[str, ...], Matrix, Matrix]:
    """Full-batch gradient descent on softmax cross-entropy; returns classes, W, b."""
    classes = tuple(sorted(set(labels)))
    index = {c: i for i, c in enumerate(classes)}
    x = Features.of(texts, dim)
    y = np.zeros((len(texts), len(classes)))
    y[np.arange(len(texts)), [index[lab] for lab in labels]] = 1.0
    w = np.zeros((dim, len(classes)))
    b = np.zeros(len(classes))
    n = float(len(texts))
    for _ in range(steps):
        g = (softmax(x.dot(w) + b) - y) / n
        w -= lr * (x.tdot(g) + l2 * w)
        b -= lr * g.sum(axis=0)
    return classes, w, b


def _rounded(a: Matrix) -> Any:
    return (np.round(a, 6) + 0.0).tolist()


def train_neural_skill(
    support: Sequence[Support],
    *,
    dim: int = DEFAULT_DIM,
    steps: int = DEFAULT_STEPS,
    lr: float = DEFAULT_LR,
    l2: float = DEFAULT_L2,
) -> str:
    """The neural skill trained from scratch on the labelled items of ``support``."""
    items = labelled(support)
    if not items:
        raise OperatorError("a neural skill needs at least one labelled record to train on")
    labels = [str(s.meta["label"]) for s in items]
    classes, w, b = train([s.content for s in items], labels, dim=dim, steps=steps, lr=lr, l2=l2)
    return canonical_json(
        {
            "format": FORMAT,
            "dim": dim,
            "classes": list(classes),
            "weights": _rounded(w),
            "bias": _rounded(b),
            "manifest": [s.uid for s in items],
            "train": {"steps": steps, "lr": lr, "l2": l2},
        }
    )
