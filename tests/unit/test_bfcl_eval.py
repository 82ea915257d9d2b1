"""The harness end to end against an in-memory stand-in for the engine's store."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip(
    "bfcl_eval", reason="bench extra not installed (pip install --no-deps bfcl-eval)"
)
pytest.importorskip("mpmath", reason="bench extra not installed (mpmath, used by MathAPI)")

from memorepair.bench.bfcl.builder import build_memory
from memorepair.bench.bfcl.eval import evaluate, format_table, plot, summarise, write_csv
from memorepair.bench.bfcl.events import generate_events
from memorepair.bench.bfcl.graph import cascade, influence_children
from memorepair.model import Artifact, ArtifactIn, EdgeIn, RepairEventSpec, Visibility


@dataclass
class Report:
    withdrawn: list[str] = field(default_factory=list)
    published: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    selected: list[str] = field(default_factory=list)
    objective: float = 0.0
    repair_value: float = 0.0
    cost: float = 0.0
    executed_cost: float = 0.0


class FakeStore:
    """`none` withdraws the roots; any other selector republishes every descendant (v2)."""

    def __init__(self) -> None:
        self.items: list[ArtifactIn | EdgeIn] = []
        self.live: dict[str, Artifact] = {}
        self.backends: list[Any] = []

    def clear(self) -> None:
        self.live, self.backends = {}, []

    def import_items(self, items: Sequence[ArtifactIn | EdgeIn]) -> None:
        self.items = list(items)
        for a in items:
            if isinstance(a, ArtifactIn):
                self.live[a.uid] = Artifact(
                    **a.model_dump(exclude={"related"}),
                    version=1,
                    ns="t",
                    visibility=Visibility.LIVE,
                )

    def register_backend(self, backend: Any) -> None:
        self.backends.append(backend)

    def repair(self, event: RepairEventSpec, *, selector: str, lam: float | None = None) -> Report:
        arts = [a for a in self.items if isinstance(a, ArtifactIn)]
        cas = cascade(influence_children(arts), event.roots)
        withdrawn = list(event.roots) if selector == "none" else sorted(cas)
        for u in withdrawn:
            self.live.pop(u)
        published = [] if selector == "none" else sorted(cas - set(event.roots))
        for u in published:
            a = next(x for x in arts if x.uid == u)
            inputs = [i for i in a.inputs if i not in event.roots]
            self.live[u] = Artifact(
                **a.model_dump(exclude={"related", "inputs"}),
                inputs=inputs,
                version=2,
                ns="t",
                visibility=Visibility.LIVE,
            )
        return Report(withdrawn=withdrawn, published=published, executed_cost=len(published))

    def retrieve(self, *, uid: str, limit: int = 1) -> list[Artifact]:
        return [self.live[uid]] if uid in self.live else []


def test_harness_runs_and_measures(tmp_path: Path) -> None:
    memory = build_memory(10)
    events = generate_events(memory, seed=1, per_type=1)
    rows = evaluate(FakeStore(), memory, events, sweep=False, size=16)  # type: ignore[arg-type]
    none = [r for r in rows if r.system == "none"]
    full = [r for r in rows if r.system == "all"]
    assert all(r.exposure == 0.0 and r.recovered == 1.0 for r in full)
    assert any(r.exposure > 0 for r in none) and all(r.recovered in (0.0, None) for r in none)
    summary = summarise(rows)
    assert "mincut@0.5" in format_table(summary)
    write_csv(rows, tmp_path / "r.csv")
    plot(summary, tmp_path / "p.png")
    assert (tmp_path / "p.png").stat().st_size > 0
