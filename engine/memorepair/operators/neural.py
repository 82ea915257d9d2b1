"""Neural skills: a small softmax classifier over hashed bag-of-words features (numpy).

It maps a record's text to its ``meta["label"]`` (e.g. which tool a user turn calls).
Training is full-batch gradient descent from zero weights, a fixed number of steps, so it
is deterministic without a seed, and a retrain on what remains after a deletion is exact
unlearning by construction: nothing trained on a forgotten example is ever a starting
point. Content is canonical JSON::

    {"format": "memorepair.neural/softmax-1", "dim": int, "classes": [label, ...],
     "weights": [[float] * len(classes)] * dim, "bias": [float] * len(classes),
     "manifest": [training record uid, ...],
     "train": {"steps": int, "lr": float, "l2": float}}

Weights are rounded to 6 decimals; predictions always use the rounded (stored) weights.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np
import numpy.typing as npt
from threadpoolctl import ThreadpoolController

from memorepair.codec import canonical_json

from .base import Support
from .common import OperatorError, parse_json, stable_hash, words

FORMAT = "memorepair.neural/softmax-1"
DEFAULT_DIM = 256
DEFAULT_STEPS = 300
DEFAULT_LR = 2.0
DEFAULT_L2 = 1e-4

Matrix = npt.NDArray[np.float64]


def featurize(texts: Sequence[str], dim: int) -> Matrix:
    """L2-normalised signed hashed bag-of-words rows, dense ``(len(texts), dim)``.

    Token t adds +-1 at ``stable_hash(t) % dim`` (``common.hashed_counts``'s vector); a
    text without words is a zero row. Each distinct token is hashed once per call (the
    memo lives only for this call, so no text outlives it in the process). Dense, because
    the products below are then one single-threaded BLAS call each: measured 10x faster
    than segment sums over a sparse form on the routers' 175-727 texts (rows ~10% filled).
    """
    memo: dict[str, tuple[int, float]] = {}
    cells: list[int] = []
    signs: list[float] = []
    for r, text in enumerate(texts):
        for token in words(text):
            hit = memo.get(token)
            if hit is None:
                h = stable_hash(token)
                hit = memo[token] = (h % dim, 1.0 if (h >> 63) == 0 else -1.0)
            cells.append(r * dim + hit[0])
            signs.append(hit[1])
    counts = np.bincount(
        np.array(cells, dtype=np.intp), weights=np.array(signs), minlength=len(texts) * dim
    )
    x = counts.reshape(len(texts), dim)
    norms = np.sqrt((x * x).sum(axis=1, keepdims=True))
    return np.asarray(x / np.where(norms > 0.0, norms, 1.0), dtype=np.float64)


_BLAS_LOCK = threading.RLock()


@cache
def _blas() -> ThreadpoolController:
    return ThreadpoolController()


@contextmanager
def one_blas_thread() -> Iterator[None]:
    """Holds BLAS to one thread while a neural product runs, one such block at a time.

    Two reasons. Speed: on a busy two-core machine a multi-threaded BLAS call on these
    thin matrices spins waiting for a core (measured 5x slower wall time than one thread
    for the 727-text router). Reproducibility: OpenBLAS's one- and two-thread products
    differ in the last bits, so a fixed thread count is what makes the same texts give
    the same weights. The limit is process-wide and threadpoolctl lets one thread hold it
    at a time, so the blocks are serialised by a lock and each sets and restores the
    limit in its own thread (its ``with`` form, which also hands back control on exit).
    Other threads' BLAS work in this process runs on one thread while a block is open.
    """
    with _BLAS_LOCK, _blas().limit(limits=1, user_api="blas"):
        yield


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
        with one_blas_thread():
            return softmax(featurize(texts, self.dim) @ self.weights + self.bias)

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
    x = featurize(texts, dim)
    xt = np.ascontiguousarray(x.T)
    y = np.zeros((len(texts), len(classes)))
    y[np.arange(len(texts)), [index[lab] for lab in labels]] = 1.0
    w = np.zeros((dim, len(classes)))
    b = np.zeros(len(classes))
    n = float(len(texts))
    with one_blas_thread():
        for _ in range(steps):
            g = (softmax(x @ w + b) - y) / n
            w -= lr * (xt @ g + l2 * w)
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
