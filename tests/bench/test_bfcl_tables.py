"""The harness's tables, files and figure from synthetic rows (the real run is in
tests/integration/test_bfcl_eval.py, against Neo4j)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip(
    "bfcl_eval", reason="bench extra not installed (pip install --no-deps bfcl-eval)"
)
pytest.importorskip("mpmath", reason="bench extra not installed (mpmath, used by MathAPI)")
pytest.importorskip("matplotlib", reason="bench extra not installed (matplotlib)")

from bench.bfcl.eval import (
    Row,
    format_table,
    frontier,
    plot,
    summarise,
    systems,
    write_csv,
    write_summary,
)


def row(event: str, kind: str, system: str, exposure: float, published: int, cost: float) -> Row:
    selector = system.split("@")[0]
    lam = float(system.split("@")[1]) if "@" in system else None
    return Row(
        category="multi_turn_base",
        event=event,
        event_type=kind,
        system=system,
        selector=selector,
        values="use" if "[use]" in system else "kind",
        lam=lam,
        sweep=False,
        cascade=10,
        withdrawn=10,
        selected=published,
        published=published,
        failed=0,
        blocked=0,
        removed=0,
        unselected=0,
        not_executable=0,
        retrievals=8,
        exposed=int(exposure * 8),
        exposure=exposure,
        availability=1.0,
        recovered=published / 8,
        looked_up=published // 2,
        useful=published / 8,
        cost=cost,
        cost_norm=cost / 8,
        objective=published - cost,
        seconds=0.1,
        failures="",
    )


def test_systems_cover_the_baselines_and_both_selectors() -> None:
    names = [s.name for s in systems()]
    assert names[:2] == ["none", "all"]
    for model in ("kind", "use"):
        assert f"mincut[{model}]@0.5" in names and f"greedy[{model}]@1" in names
    assert len(systems(sweep=True)) > len(systems())


def test_summary_table_and_files(tmp_path: Path) -> None:
    rows = [
        row(f"e-{kind}", kind, system, exp, pub, cost)
        for kind in ("delete", "correct", "migrate")
        for system, exp, pub, cost in (
            ("none", 0.5, 0, 0.0),
            ("all", 0.0, 8, 8.0),
            ("mincut[kind]@1", 0.0, 6, 4.0),
            ("greedy[kind]@1", 0.0, 4, 4.0),
            ("mincut[use]@1", 0.0, 5, 3.0),
        )
    ]
    summary = summarise(rows)
    assert [s["event_type"] for s in summary][::5] == ["all", "delete", "correct", "migrate"]
    overall = {s["system"]: s for s in summary if s["event_type"] == "all"}
    assert overall["none"]["exposure"] == 0.5 and overall["all"]["recovered"] == 1.0
    assert overall["mincut[kind]@1"]["cost_norm"] == 0.5
    assert overall["mincut[use]@1"]["useful"] == 5 / 8
    table = format_table(summary)
    assert "mincut[use]@1" in table and "useful" in table and "exposure" in table
    write_csv(rows, tmp_path / "r.csv")
    write_summary(summary, tmp_path / "s.csv")
    plot(summary, tmp_path / "p.png")
    assert (tmp_path / "p.png").stat().st_size > 0
    assert len((tmp_path / "r.csv").read_text().splitlines()) == len(rows) + 1


def test_frontier_reports_the_recovery_target_both_ways() -> None:
    def summary(points: list[tuple[str, float, float]]) -> list[dict[str, object]]:
        return [
            {
                "event_type": "all",
                "system": name,
                "lam": float(name.split("@")[1]),
                "recovered": rec,
                "cost_norm": cost,
            }
            for name, rec, cost in points
        ]

    missed = frontier(
        summary(
            [
                ("mincut[kind]@1", 0.954, 0.903),
                ("mincut[kind]@1.25", 0.769, 0.670),
                ("mincut[kind]@1.5", 0.139, 0.059),
            ]
        )
    )
    assert missed[0].endswith("not met")
    assert "0.139 (mincut[kind]@1.5" in missed[1]
    assert "0.903 (mincut[kind]@1," in missed[2]
    met = frontier(summary([("mincut[kind]@0.5", 1.0, 1.0), ("mincut[kind]@1", 0.96, 0.55)]))
    assert met[0].endswith("met by mincut[kind]@1")
    assert (
        frontier(
            [
                {
                    "event_type": "all",
                    "system": "all",
                    "lam": None,
                    "recovered": 1.0,
                    "cost_norm": 1.0,
                }
            ]
        )
        == []
    )


def test_pre_and_post_workloads_share_one_distribution_but_not_draws() -> None:
    from bench.bfcl.builder import build_memory
    from bench.bfcl.workload import popularity, pre_workload, task_lookups, workload

    memory = build_memory(6)
    weights = popularity(memory, seed=7)
    assert weights == popularity(memory, seed=7)  # seeded, independent of any event
    assert abs(sum(weights.values()) - 1.0) < 1e-9
    assert set(weights) == set(task_lookups(memory, [t.id for t in memory.tasks]))
    assert len(set(weights.values())) > 1  # skewed, not uniform
    pre = pre_workload(memory, weights, 200, seed=7)
    assert len(pre) == 200 and set(pre) <= set(weights)
    fired = {a.uid for a in memory.artifacts if a.meta.get("task") == memory.tasks[0].id}
    post = workload(memory, fired, "e-1", 50, weights)
    assert post == workload(memory, fired, "e-1", 50, weights)  # every system sees the same
    assert post != pre[:50]
