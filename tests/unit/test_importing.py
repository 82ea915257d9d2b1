"""The pure parts of crash-safe batches: when an item run again is identical to what is
stored (skipped) or different (refused, naming the fields), and each staged version's
visibility at publication (no database)."""

from __future__ import annotations

from typing import Any

import pytest

from memorepair import importing
from memorepair.errors import MemoRepairError
from memorepair.importing import Owner, decide, differences


def _stored(**fields: Any) -> dict[str, Any]:
    row = {
        "kind": "summary",
        "arch": None,
        "content": "Ana flies in May",
        "value": 1,
        "repair_cost": None,
        "recipe": None,
        "meta": '{"n":1}',
        "inputs": ["a", "b"],
        "input_vids": [{"pos": 1, "vid": "ns/b@1"}, {"pos": 0, "vid": "ns/a@3"}],
    }
    return row | fields


def _row(**fields: Any) -> dict[str, Any]:
    row = {
        "kind": "summary",
        "arch": None,
        "content": "Ana flies in May",
        "value": 1.0,
        "repair_cost": None,
        "recipe": None,
        "meta": '{"n":1}',
        "inputs": ["a", "b"],
        "vid": "ns/s@1",  # not compared: the same uid has the same vid
    }
    return row | fields


def test_identical_items_have_no_differences() -> None:
    assert differences(_row(), _stored(), [None, None]) == []
    # a pin to the exact version the stored one was derived from is identical
    assert differences(_row(), _stored(), ["ns/a@3", None]) == []
    # stored forms that mean the same value: 1 and 1.0, an empty list and none
    assert differences(_row(inputs=[]), _stored(inputs=None, input_vids=[]), []) == []


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"content": "Ana flies in June"}, "content"),
        ({"meta": '{"n":2}'}, "meta"),
        ({"meta": None}, "meta"),
        ({"kind": "record"}, "kind"),
        ({"value": 2.0}, "value"),
        ({"repair_cost": 0.5}, "repair_cost"),
        ({"recipe": '{"executor":"text.join"}'}, "recipe"),
        ({"inputs": ["b", "a"]}, "inputs"),
        ({"inputs": ["a"]}, "inputs"),
    ],
)
def test_each_differing_field_is_named(change: dict[str, Any], field: str) -> None:
    assert differences(_row(**change), _stored(), [None, None]) == [field]


def test_a_pin_to_another_version_differs() -> None:
    assert differences(_row(), _stored(), ["ns/a@2", None]) == ["pinned input versions"]
    several = differences(_row(content="x", meta=None), _stored(), [None, "ns/b@2"])
    assert several == ["content", "meta", "pinned input versions"]


def test_false_and_zero_are_not_confused() -> None:
    assert differences(_row(value=0), _stored(value=False), [None, None]) == ["value"]


# ---- publication ------------------------------------------------------------------------------
def _source(vid: str, pos: int = 0, **state: Any) -> dict[str, Any]:
    base = {
        "pos": pos,
        "vid": vid,
        "staged": False,
        "live": True,
        "head": True,
        "removed": False,
        "held_by": None,
        "holder": None,
    }
    return base | state


def _staged(vid: str, *inputs: dict[str, Any]) -> dict[str, Any]:
    return {"vid": vid, "uid": vid.split("/")[1].split("@")[0], "inputs": list(inputs)}


def test_served_inputs_publish_served_in_input_first_order() -> None:
    rows = decide(
        [
            _staged("ns/s@1", _source("ns/r@1", staged=True, live=None, head=False)),
            _staged("ns/r@1", _source("ns/base@1")),
        ]
    )
    assert [(r["uid"], r["live"], r["held_by"], r["outcome"]) for r in rows] == [
        ("r", True, None, None),
        ("s", True, None, None),
    ]


def test_an_input_withdrawn_meanwhile_withdraws_its_descendants_in_the_import() -> None:
    held = _source("ns/base@1", live=False, held_by="ns/ev-1")
    rows = decide(
        [
            _staged("ns/r@1", held),
            _staged("ns/s@1", _source("ns/r@1", staged=True, live=None, head=False)),
            _staged("ns/t@1", _source("ns/other@1")),
        ]
    )
    by_uid = {r["uid"]: r for r in rows}
    assert (by_uid["r"]["live"], by_uid["r"]["held_by"], by_uid["r"]["outcome"]) == (
        False,
        "ns/ev-1",
        "late_arrival",
    )
    assert (by_uid["s"]["live"], by_uid["s"]["held_by"]) == (False, "ns/ev-1")
    assert by_uid["t"]["live"] is True


@pytest.mark.parametrize(
    "state",
    [
        {"live": False, "head": False},  # superseded by a published successor
        {"live": False, "head": True, "removed": True},  # deleted
    ],
)
def test_an_input_no_longer_current_makes_it_stale(state: dict[str, Any]) -> None:
    stale = _source("ns/base@1", holder="ns/ev-2", **state)
    withdrawn = _source("ns/x@1", pos=1, live=False, held_by="ns/ev-1")
    [row] = decide([_staged("ns/s@1", stale, withdrawn)])
    # stale_input wins over late_arrival, with the event that superseded or deleted it
    assert (row["live"], row["held_by"], row["outcome"]) == (False, "ns/ev-2", "stale_input")


def test_an_input_read_twice_counts_once() -> None:
    twice = [_source("ns/a@1", holder="ns/e1"), _source("ns/a@1", holder="ns/e2")]
    [row] = decide([_staged("ns/s@1", *twice)])
    assert row["live"] is True


def test_a_cycle_is_refused_not_guessed() -> None:
    a = _staged("ns/a@1", _source("ns/b@1", staged=True, live=None, head=False))
    b = _staged("ns/b@1", _source("ns/a@1", staged=True, live=None, head=False))
    with pytest.raises(MemoRepairError, match="cycle"):
        decide([a, b])


def test_owner_of_this_process_is_alive_and_a_dead_pid_is_not() -> None:
    me = Owner.this_process()
    assert me.alive() is True
    assert Owner("some-other-host", me.pid, "x").alive() is None
    assert Owner(me.host, 2**22 + 12345, "x").alive() is False  # above pid_max


def test_digest_is_of_the_items_in_order() -> None:
    from memorepair.model import ArtifactIn, Kind

    a = ArtifactIn(uid="a", kind=Kind.RECORD, content="x")
    b = ArtifactIn(uid="b", kind=Kind.RECORD, content="y")
    assert importing.items_digest([a, b]) == importing.items_digest([a, b])
    assert importing.items_digest([a, b]) != importing.items_digest([b, a])
