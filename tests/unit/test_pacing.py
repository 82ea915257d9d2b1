"""MEMOREPAIR_REPAIR_PACE: validated as a share of time, handed to every repair, and the
rest a paced writer takes after each batch (no timing: the requested sleep is checked)."""

from __future__ import annotations

import pytest

from memorepair import store
from memorepair.errors import ConfigError
from memorepair.settings import RepairConfig, load_settings


@pytest.mark.parametrize("bad", ["0", "-0.5", "1.5", "nan", "inf", "fast"])
def test_a_pace_outside_0_to_1_is_refused_naming_the_variable(
    monkeypatch: pytest.MonkeyPatch, bad: str
) -> None:
    monkeypatch.setenv("MEMOREPAIR_REPAIR_PACE", bad)
    with pytest.raises(ConfigError, match="MEMOREPAIR_REPAIR_PACE"):
        load_settings()


def test_the_pace_reaches_the_repair_config(monkeypatch: pytest.MonkeyPatch) -> None:
    assert RepairConfig.from_settings(load_settings()).pace == RepairConfig().pace
    monkeypatch.setenv("MEMOREPAIR_REPAIR_PACE", "0.25")
    assert RepairConfig.from_settings(load_settings()).pace == 0.25


@pytest.mark.parametrize(
    ("took", "pace", "rests"),
    [(2.0, 0.5, 2.0), (1.0, 0.25, 3.0), (0.4, 0.8, 0.1), (5.0, 1.0, None)],
)
def test_a_paced_writer_rests_so_its_writes_take_the_pace_share(
    monkeypatch: pytest.MonkeyPatch, took: float, pace: float, rests: float | None
) -> None:
    slept: list[float] = []
    monkeypatch.setattr(store.time, "sleep", slept.append)
    store.rest(took, pace)
    if rests is None:
        assert slept == []
    else:
        assert slept == [pytest.approx(rests)]
        assert took / (took + slept[0]) == pytest.approx(pace)
