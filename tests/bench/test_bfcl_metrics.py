"""Exposure on a hand-made example (no BFCL, no database)."""

from __future__ import annotations

from bench.bfcl.graph import cascade, depth, influence_children
from bench.bfcl.metrics import (
    ExposureCheck,
    Recovery,
    Served,
    availability,
    exposure,
    pooled,
    ratio,
)

from memorepair.model import ArtifactIn, Kind

# r1 -> c1 -> s1 -> p ; r2 -> c2 -> s1 ; r2 -> s2 (s2 does not depend on r1)
ART = [
    ArtifactIn(uid="r1", kind=Kind.RECORD, content="x"),
    ArtifactIn(uid="r2", kind=Kind.RECORD, content="y"),
    ArtifactIn(uid="c1", kind=Kind.CACHE, content="x1", inputs=["r1"]),
    ArtifactIn(uid="c2", kind=Kind.CACHE, content="y1", inputs=["r2"]),
    ArtifactIn(uid="s1", kind=Kind.SUMMARY, content="s", inputs=["c1", "c2"]),
    ArtifactIn(uid="s2", kind=Kind.SUMMARY, content="t", inputs=["r2"]),
    ArtifactIn(uid="p", kind=Kind.SKILL, arch="prompt", content="p", inputs=["s1"]),
]
INPUTS = {a.uid: tuple(a.inputs) for a in ART}


def test_cascade_and_depth() -> None:
    children = influence_children(ART)
    assert cascade(children, ["r1"]) == {"r1", "c1", "s1", "p"}
    assert depth(children) == 3


def test_no_cascade_repair_exposes_descendants_only() -> None:
    fired = dict.fromkeys(cascade(influence_children(ART), ["r1"]), 1)
    live = {u: Served(u, 1, INPUTS[u]) for u in INPUTS if u != "r1"}  # only the root withdrawn
    check = ExposureCheck(fired, live.get)
    retrievals = [[live["p"]], [live["s2"]], [live["c1"]], [live["c2"]]]
    assert exposure(retrievals, check) == 0.5
    assert availability(retrievals) == 1.0


def test_repaired_successors_are_clean_and_orphans_are_not() -> None:
    fired = dict.fromkeys(cascade(influence_children(ART), ["r1"]), 1)
    # c1 removed; s1 regenerated from c2 only (v2); p republished (v2) from s1@2
    live = {
        "r2": Served("r2", 1),
        "c2": Served("c2", 1, ("r2",)),
        "s1": Served("s1", 2, ("c2",)),
        "s2": Served("s2", 1, ("r2",)),
        "p": Served("p", 2, ("s1",)),
    }
    check = ExposureCheck(fired, live.get)
    assert exposure([[live["p"]], [live["s1"]], []], check) == 0.0
    # a successor that still lists the removed c1 as support is derived from invalid support
    bad = Served("s1", 2, ("c1", "c2"))
    assert ExposureCheck(fired, {**live, "s1": bad}.get).exposed(Served("p", 2, ("s1",)))


def test_ratio() -> None:
    assert ratio(3, 4) == 0.75 and ratio(0, 0) is None


def test_recovery_is_normalised_by_what_the_event_could_publish() -> None:
    # Four successors could be published; the system published three, one of them (x) is
    # outside what could be published and does not count; look-ups read a five times.
    outcome = Recovery(
        runnable=frozenset({"a", "b", "c", "d"}),
        published=frozenset({"a", "b", "x"}),
        lookups=("a", "a", "a", "a", "a", "c", "z", "b"),
    )
    assert outcome.recovered == 0.5  # a, b of a..d: Repair-all's own failures count too
    assert outcome.uids == (2, 3)  # a, b of the eligible a, b, c (z: not publishable)
    assert outcome.looks == (6, 7)  # by look-up: a five times, b once, c once missed
    assert pooled([outcome.looks, (0, 3)]) == 0.6
    nothing = Recovery(frozenset(), frozenset(), ("a",))
    assert nothing.recovered is None and nothing.looks == (0, 0)
    assert pooled([nothing.looks]) is None
