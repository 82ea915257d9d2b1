"""The value-from-use and cost-from-work functions (values.py) and where each default
comes from in the candidates (explicit > use / work > prior)."""

from __future__ import annotations

import pytest

from memorepair.candidates import CascadeNode, build_candidates
from memorepair.model import MAX_COST, EventType, Kind, Mode
from memorepair.serving.usage import Pending, decay
from memorepair.settings import RepairConfig
from memorepair.values import (
    Use,
    WorkStats,
    cost_from_work,
    decayed_uses,
    value_from_use,
    work_rows,
)

H = 3600.0  # a one-hour half-life keeps the numbers readable
NOW = 1_000_000.0


def _value(
    use: Use | None,
    *,
    since: float | None = 0.0,
    created: float | None = 0.0,
    warmup_s: float = 0.0,
    prior: float = 4.0,
) -> tuple[float, str]:
    return value_from_use(
        prior, use, now=NOW, since=since, created=created, half_life_s=H, warmup_s=warmup_s
    )


def test_decay_halves_per_half_life() -> None:
    assert decay(0, H) == 1.0
    assert decay(H, H) == pytest.approx(0.5)
    assert decay(3 * H, H) == pytest.approx(0.125)
    assert decay(-5, H) == 1.0  # a future time (clock skew) never counts more than now


def test_decayed_uses_ages_the_stored_frequency() -> None:
    use = Use(count=3, freq=3.0, freq_at=NOW - 2 * H)
    assert decayed_uses(use, NOW, H) == pytest.approx(0.75)


def test_buffer_sum_equals_reads_one_by_one() -> None:
    p = Pending(1, 0.0, 1.0)
    p.add(H, H)  # the first read is one half-life old now
    p.add(H, H)
    assert p.count == 3 and p.freq == pytest.approx(2.5) and p.at == H
    p.add(0.0, H)  # a read stamped earlier (clock step): counted at its age
    assert p.freq == pytest.approx(3.0) and p.at == H


def test_value_is_prior_times_decayed_use() -> None:
    w, source = _value(Use(2, 2.0, NOW - H))
    assert source == "use" and w == pytest.approx(4.0)  # prior 4 x (2 reads at 1/2)


def test_no_history_gives_the_prior() -> None:
    assert _value(None, since=None) == (4.0, "prior")  # recording never wrote here


def test_never_served_counts_only_after_the_warm_up() -> None:
    # recording on for 2h, the version 30 min old: too young to judge -> prior
    assert _value(None, since=NOW - 2 * H, created=NOW - 1800, warmup_s=H) == (4.0, "prior")
    # both older than the warm-up: never served is evidence -> w = 0
    assert _value(None, since=NOW - 2 * H, created=NOW - 3 * H, warmup_s=H) == (0.0, "use")
    # recording began after the version: the warm-up runs from when recording began
    assert _value(None, since=NOW - 1800, created=NOW - 9 * H, warmup_s=H) == (4.0, "prior")


def test_cost_is_seconds_measured_else_the_median_else_the_prior() -> None:
    assert cost_from_work(3.0, None, None) == (3.0, "prior")
    assert cost_from_work(3.0, 0.002, 0.5) == (0.002, "work")  # its own last successor
    assert cost_from_work(3.0, None, 0.5) == (0.5, "median")  # its operator and kind
    assert cost_from_work(3.0, 1e9, None) == (MAX_COST, "work")  # capped like a setting
    assert cost_from_work(3.0, 0.0, None) == (0.0, "work")  # measured free is free


def test_running_median_per_operator_and_kind() -> None:
    measured = [
        ("chain", "skill.chain", 0.09),
        ("chain", "skill.chain", 0.11),
        ("chain", "skill.chain", 2.0),
        ("recompute", "cache", 0.001),
        (None, "cache", 5.0),  # no operator (remove): nothing to learn
        ("recompute", "record", None),  # not built: nothing measured
    ]
    rows = work_rows("ns", measured)
    assert rows == [
        {"key": "ns/chain/skill.chain", "operator": "chain", "kind": "skill.chain",
         "samples": [0.09, 0.11, 2.0]},
        {"key": "ns/recompute/cache", "operator": "recompute", "kind": "cache",
         "samples": [0.001]},
    ]  # fmt: skip
    stats = WorkStats({(r["operator"], r["kind"]): r["samples"] for r in rows})
    assert stats.median("chain", "skill.chain") == 0.11  # one slow run does not move it
    assert stats.median("chain", "skill.prompt") is None
    assert stats.median(None, "cache") is None


def _node(
    uid: str,
    *,
    root: bool = False,
    value: float | None = None,
    cost: float | None = None,
    work_s: float | None = None,
) -> CascadeNode:
    return CascadeNode(
        vid=f"ns/{uid}@1",
        uid=uid,
        version=1,
        kind=Kind.SUMMARY,
        arch=None,
        value=value,
        repair_cost=cost,
        recipe=None,
        inputs=() if root else ("r", "keep"),
        root=root,
        work_s=work_s,
    )


def test_candidates_say_where_w_and_c_came_from() -> None:
    config = RepairConfig()
    nodes = [
        _node("r", root=True),
        _node("a", value=7.0, cost=2.0),
        _node("b", work_s=0.004),
        _node("c"),
        _node("d"),
    ]
    family = build_candidates(
        nodes,
        EventType.CORRECT,
        {"keep": True},
        default_value=config.default_value,
        default_cost=config.default_cost,
        operator_for=lambda mode, node: "op" if mode is Mode.REGEN else None,
        value_of=lambda node, prior: (prior * 2, "use") if node.uid == "b" else (prior, "prior"),
        cost_of=lambda node, prior, operator: cost_from_work(
            prior, node.work_s, 0.25 if node.uid == "d" and operator == "op" else None
        ),
    )
    got = {c.uid: (c.value, c.value_source, c.cost, c.cost_source) for c in family.candidates}
    assert got["a"] == (7.0, "explicit", 2.0, "explicit")
    assert got["b"] == (8.0, "use", 0.004, "work")
    assert got["c"] == (4.0, "prior", config.default_cost("summary"), "prior")
    assert got["d"] == (4.0, "prior", 0.25, "median")
    assert {c.table_key for c in family.candidates} == {"summary"}
