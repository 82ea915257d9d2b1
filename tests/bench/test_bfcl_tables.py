"""The harness's figures, frontier and files from synthetic rows and plans (the run itself
is in tests/bench/test_bfcl_eval.py, against Neo4j)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip(
    "bfcl_eval", reason="bench extra not installed (pip install --no-deps bfcl-eval)"
)
pytest.importorskip("mpmath", reason="bench extra not installed (mpmath, used by MathAPI)")
pytest.importorskip("matplotlib", reason="bench extra not installed (matplotlib)")

from bench.bfcl.eval import (
    bound_lines,
    failure_lines,
    format_table,
    frontier_lines,
    frontier_points,
    kind_lines,
    plot,
    summarise,
    target_lines,
    undefined_lines,
    write_rows,
)
from bench.bfcl.timeline import EventRow, PlannedEvent, systems

from memorepair.candidates import Candidate, CandidateFamily
from memorepair.model import EventType, Mode, RepairEventSpec
from memorepair.repair import Plan
from memorepair.selection import select


def row(event: str, kind: str, system: str, **figures: Any) -> EventRow:
    values: dict[str, Any] = {
        "round": 1,
        "runnable": 8,
        "published": 8,
        "failed": 0,
        "uids_hit": 4,
        "uids_eligible": 4,
        "looks_hit": 10,
        "looks_eligible": 10,
        "work_s": 2.0,
        "planned_s": 2.0,
        "planned_all_s": 2.0,
        "exposure": 0.0,
    }
    values.update(figures)
    runnable = int(values["runnable"])
    return EventRow(
        category="multi_turn_base",
        round=int(values["round"]),
        event=event,
        event_type=kind,
        system=system,
        lam=1.0,
        cascade=10,
        runnable=runnable,
        selected=int(values["published"]),
        published=int(values["published"]),
        failed=int(values["failed"]),
        blocked=0,
        removed=0,
        unselected=0,
        lookups=10,
        exposed=0,
        exposure=values["exposure"],
        availability=1.0,
        recovered=values["published"] / runnable if runnable else None,
        uids_hit=int(values["uids_hit"]),
        uids_eligible=int(values["uids_eligible"]),
        looks_hit=int(values["looks_hit"]),
        looks_eligible=int(values["looks_eligible"]),
        served=str(values.get("served", "1111111111")),
        planned_s=values["planned_s"],
        planned_all_s=values["planned_all_s"],
        work_s=values["work_s"],
        cpu_s=values["work_s"] / 2,
        repair_s=1.0,
        failures="chain: step 1 ... got int" if values["failed"] else "",
        by_kind=str(values.get("by_kind", "{}")),
    )


def test_systems_are_the_baselines_the_default_and_the_extras() -> None:
    assert [s.name for s in systems()] == ["none", "all", "mincut"]
    extra = systems([0.5, 30], ablation=True)
    assert [s.name for s in extra][3:] == ["mincut@0.5", "mincut@30", "greedy"]
    assert extra[3].lam == 0.5 and systems()[2].lam is None  # the default: the settings'


#: An event that could publish nothing: its ratios are undefined.
NOTHING = {
    "runnable": 0,
    "published": 0,
    "uids_hit": 0,
    "uids_eligible": 0,
    "looks_hit": 0,
    "looks_eligible": 0,
}


def test_figures_pool_look_ups_and_share_seconds_with_repair_all(tmp_path: Path) -> None:
    rows = [
        # round 0 is not measured
        row("r0-a", "delete", "all", round=0, work_s=99.0),
        row("r0-a", "delete", "mincut", round=0, work_s=0.0),
        row("a", "delete", "all", work_s=4.0, failed=1, published=7),
        row("a", "delete", "mincut", work_s=1.0, looks_hit=9, published=6, planned_s=0.5),
        row("b", "migrate", "all", work_s=6.0),
        row(
            "b",
            "migrate",
            "mincut",
            work_s=2.0,
            looks_hit=1,
            looks_eligible=2,
            uids_hit=1,
            served="1111100000",
        ),
        row("c", "migrate", "all", **NOTHING),
        row("c", "migrate", "mincut", **NOTHING),
    ]
    summary = summarise(rows)
    overall = {s["system"]: s for s in summary if s["event_type"] == "all"}
    everything, default = overall["all"], overall["mincut"]
    assert everything["events"] == 3 and everything["failed"] == 1  # its own column
    assert everything["recovered"] == pytest.approx((7 / 8 + 1) / 2)  # c: undefined
    assert everything["work_share"] == 1.0 and everything["work_s"] == 12.0
    assert default["work_share"] == pytest.approx(5 / 12)  # ratio of sums, same events
    assert default["cpu_share"] == pytest.approx(5 / 12)
    assert default["useful_looks"] == pytest.approx(10 / 12)  # pooled over look-ups
    assert default["useful_uids"] == pytest.approx((1 + 1 / 4) / 2)  # mean over events
    # Served where Repair-all served, whatever the events' cascades: b missed 5 of its 10.
    assert default["served_all"] == pytest.approx(25 / 30)
    assert default["undefined_recovered"] == ["base/c"] and default["undefined_useful"] == [
        "base/c"
    ]
    assert [s["event_type"] for s in summary] == ["all"] * 2 + ["delete"] * 2 + ["migrate"] * 2
    table = format_table(summary)
    assert "useful/look-up" in table and "work/all" in table
    assert any(
        "1 event(s) with nothing to publish: base/c" in line for line in undefined_lines(summary)
    )
    assert failure_lines(rows) == ["  multi_turn_base a: 1 failed: chain: step 1 ... got int"]
    lines = target_lines(summary, rows, 2.0)
    assert lines[0].startswith("default λ = 2 reads per second of repair (0.5 s per read)")
    assert "NOT met" in lines[1] and "Repair-all failures 1 = 0 no" in lines[1]
    write_rows(rows, tmp_path / "r.csv")
    assert len((tmp_path / "r.csv").read_text().splitlines()) == len(rows) + 1


def candidate(uid: str, value: float, cost: float, requires: tuple[str, ...] = ()) -> Candidate:
    return Candidate(uid, f"ns/{uid}@1", Mode.REGEN, "regen", True, "", value, cost, requires)


def planned_event(name: str, looks: dict[str, int]) -> PlannedEvent:
    # r (unread record, cheap) feeds s (read, 1 s) and n (read, 10 s); x is never read.
    family = CandidateFamily(
        candidates=(
            candidate("n", 6.0, 10.0, ("r",)),
            candidate("r", 0.0, 0.1),
            candidate("s", 4.0, 1.0, ("r",)),
            candidate("x", 0.0, 5.0),
        ),
        requirement_edges=(("r", "n"), ("r", "s")),
        root_vids={},
    )
    family = CandidateFamily(
        family.candidates,
        family.requirement_edges,
        family.root_vids,
        {c.uid: c for c in family.candidates},
    )
    lam = 1.0
    spec = RepairEventSpec(id=name, type=EventType.DELETE, roots=["q"])
    plan = Plan(spec, [], family, select(family, lam, "mincut"), lam)
    runnable = frozenset({"n", "r", "s", "x"})
    return PlannedEvent(name, family, plan.frontier(), runnable, Counter(looks))


def test_pooled_frontier_and_bound_from_the_plans(tmp_path: Path) -> None:
    planned = [planned_event("e1", {"n": 6, "s": 2}), planned_event("e2", {"s": 2})]
    points = frontier_points(planned)
    assert [p.lam for p in points] == pytest.approx([0.0, 0.6, 4 / 1.1])
    first, middle, last = points
    # λ < 0.6: r, s, n repaired (x never: unread), 10 of 10 look-ups served.
    assert first.useful == 1.0 and first.recovered == pytest.approx(6 / 8)
    assert first.cost_share == pytest.approx(2 * 11.1 / (2 * 16.1))
    # 0.6 <= λ < 3.64: n (10 s for 6 reads) is skipped: e1 loses its 6 look-ups of n.
    assert middle.useful == pytest.approx(4 / 10) and middle.cost_share == pytest.approx(2.2 / 32.2)
    assert last.useful == 0.0 and last.cost_share == 0.0
    lines = frontier_lines(points, 1.0)
    assert sum(line.lstrip().startswith("*") for line in lines) == 2  # the row and the note
    assert "0.4" in next(line for line in lines if line.lstrip().startswith("* ") and "0.6" in line)
    bound, b = bound_lines(planned)
    # Every look-up served takes n, r, s in e1 and r, s in e2: 12.2 s of the 32.2, within
    # the 0.6 budget; the bound may not claim less recovery or more cost than that.
    assert b is not None and b.recovered_max == pytest.approx(1.0)
    assert 0 < b.cost_min <= 12.2 / 32.2 + 1e-9 and "bound over every" in bound[0]
    plot(
        points,
        summarise([row("a", "delete", "all"), row("a", "delete", "mincut")]),
        tmp_path / "f.png",
    )
    assert (tmp_path / "f.png").stat().st_size > 0


def test_seconds_by_kind_sum_the_measured_rounds_per_system() -> None:
    chain = '{"skill/chain": [2, 0.25, 0.125], "record": [4, 0.5, 0.25]}'
    rows = [
        row("r0", "migrate", "all", round=0, by_kind='{"record": [100, 9.0, 9.0]}'),
        row("r1", "migrate", "all", by_kind=chain),
        row("r2", "delete", "all", by_kind='{"record": [1, 0.5, 0.75]}'),
        row("r1", "migrate", "mincut", by_kind='{"record": [4, 1.0, 0.25]}'),
        row("r1", "migrate", "none"),
    ]
    lines = kind_lines(rows)
    table = {line.split()[0]: line.split()[1:] for line in lines[2:]}
    # round 0 left out; per kind: n, measured, planned for Repair-all, then the default
    assert table["record"] == ["5", "1.000", "1.000", "4", "1.000", "0.250"]
    assert table["skill/chain"] == ["2", "0.250", "0.125", "0", "0.000", "0.000"]
    assert kind_lines([row("r1", "delete", "none")]) == []
