"""The mode map and candidate family (SPEC §4) as pure functions."""

from __future__ import annotations

import random

import networkx as nx
import pytest

from memorepair.candidates import CascadeNode, build_candidates
from memorepair.graphs import on_cycles
from memorepair.model import Arch, EventType, Kind, Mode, Recipe
from memorepair.settings import DEFAULT_COSTS, DEFAULT_VALUES

REPLAY = Recipe(executor="text.join")


def node(
    uid: str,
    kind: Kind,
    inputs: tuple[str, ...] = (),
    *,
    arch: Arch | None = None,
    recipe: Recipe | None = None,
    root: bool = False,
    value: float | None = None,
) -> CascadeNode:
    return CascadeNode(
        vid=f"ns/{uid}@1",
        uid=uid,
        version=1,
        kind=kind,
        arch=arch,
        value=value,
        repair_cost=None,
        recipe=recipe,
        inputs=inputs,
        root=root,
    )


def family(
    nodes: list[CascadeNode],
    event: EventType,
    served: dict[str, bool] | None = None,
    available: bool = True,
):  # type: ignore[no-untyped-def]
    return build_candidates(
        nodes,
        event,
        served or {},
        default_value=DEFAULT_VALUES.__getitem__,
        default_cost=DEFAULT_COSTS.__getitem__,
        operator_for=lambda mode, n: f"op-{mode.value}" if available else None,
    )


def modes(f) -> dict[str, Mode]:  # type: ignore[no-untyped-def]
    return {c.uid: c.mode for c in f.candidates}


def test_mode_map_per_kind_and_support() -> None:
    nodes = [
        node("root", Kind.RECORD, root=True),
        node("call", Kind.RECORD, ("root",)),  # record: remove
        node("cache", Kind.CACHE, ("call", "kept"), recipe=REPLAY),  # replays a removed input
        node("cache2", Kind.CACHE, ("kept",), recipe=REPLAY),  # hmm: not downstream
        node("sum", Kind.SUMMARY, ("root", "kept", "cache")),  # regen from 'kept'
        node("only", Kind.SUMMARY, ("root",)),  # nothing left: remove
        node("nn", Kind.SKILL, ("root", "kept"), arch=Arch.NEURAL),  # param
        node("chain", Kind.SKILL, ("sum",), arch=Arch.CHAIN),  # regen, requires sum
    ]
    f = family(nodes, EventType.DELETE, {"kept": True})
    assert modes(f) == {
        "call": Mode.REMOVE,
        "cache": Mode.REMOVE,
        "cache2": Mode.RECOMPUTE,
        "sum": Mode.REGEN,
        "only": Mode.REMOVE,
        "nn": Mode.PARAM,
        "chain": Mode.REGEN,
    }
    by = {c.uid: c for c in f.candidates}
    assert by["sum"].requires == ()  # the removed cache is dropped, not required
    assert by["chain"].requires == ("sum",)
    assert ("sum", "chain") in f.requirement_edges
    assert by["cache"].reason == "replay recipe consumes a removed descendant"
    assert by["nn"].value == DEFAULT_VALUES["skill.neural"]
    assert f.root_vids == {"root": "ns/root@1"}


def test_corrected_root_is_support_but_deleted_root_is_not() -> None:
    nodes = [
        node("root", Kind.RECORD, root=True),
        node("cache", Kind.CACHE, ("root",), recipe=REPLAY),
    ]
    assert modes(family(nodes, EventType.CORRECT))["cache"] is Mode.RECOMPUTE
    assert modes(family(nodes, EventType.DELETE))["cache"] is Mode.REMOVE


def test_unserved_input_outside_the_cascade_is_invalid() -> None:
    nodes = [node("root", Kind.RECORD, root=True), node("sum", Kind.SUMMARY, ("root", "old"))]
    assert modes(family(nodes, EventType.DELETE, {"old": False}))["sum"] is Mode.REMOVE
    assert modes(family(nodes, EventType.DELETE, {"old": True}))["sum"] is Mode.REGEN


def test_unavailable_operator_makes_a_candidate_non_executable() -> None:
    nodes = [node("root", Kind.RECORD, root=True), node("sum", Kind.SUMMARY, ("root", "kept"))]
    (c,) = family(nodes, EventType.DELETE, {"kept": True}, available=False).candidates
    assert c.mode is Mode.REGEN and not c.executable
    assert "no regen operator" in c.reason


def test_requirement_cycle_members_are_not_executable() -> None:
    nodes = [
        node("root", Kind.RECORD, root=True),
        node("a", Kind.SUMMARY, ("root", "b")),
        node("b", Kind.SUMMARY, ("root", "a")),
        node("c", Kind.SUMMARY, ("root", "kept")),
    ]
    f = family(nodes, EventType.CORRECT, {"kept": True})
    by = {c.uid: c for c in f.candidates}
    assert not by["a"].executable and not by["b"].executable
    assert by["a"].reason == "on a cycle of the requirement graph"
    assert by["c"].executable


@pytest.mark.parametrize("seed", range(40))
def test_cycle_detection_matches_networkx(seed: int) -> None:
    rng = random.Random(seed)
    n = rng.randint(1, 30)
    edges = [(rng.randrange(n), rng.randrange(n)) for _ in range(rng.randint(0, 3 * n))]
    edges = [(a, b) for a, b in edges if a != b]
    graph = nx.DiGraph()
    graph.add_nodes_from(range(n))
    graph.add_edges_from(edges)
    expected = {
        v for comp in nx.strongly_connected_components(graph) if len(comp) > 1 for v in comp
    }
    assert on_cycles(list(range(n)), edges) == expected


def test_mode_map_is_deterministic_whatever_the_input_order() -> None:
    nodes = [node("root", Kind.RECORD, root=True)] + [
        node(f"s{i}", Kind.SUMMARY, ("root", "kept") + ((f"s{i - 1}",) if i else ()))
        for i in range(10)
    ]
    shuffled = nodes[:]
    random.Random(3).shuffle(shuffled)
    assert family(nodes, EventType.DELETE, {"kept": True}) == family(
        shuffled, EventType.DELETE, {"kept": True}
    )
