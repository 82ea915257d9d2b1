"""Reach stays linear: the planner uses the pruning BFS expand, and every query file plans.

A reach that enumerated paths would be exponential on diamonds (2**40 paths at depth 40);
the ladder test computes that cascade through the engine in bounded time.
"""

from __future__ import annotations

from typing import Any

import pytest
from bench.perf import REACH_CASCADE, diamond_ladder

from memorepair import queries
from memorepair.api import MemoryStore
from memorepair.queries import Query

#: The operator Neo4j 5.26 plans for `[:INFLUENCES*0..]` under DISTINCT with an unnamed
#: relationship: breadth-first, pruning nodes already reached (linear in the edges).
PRUNING = "VarLengthExpand(Pruning"
ENUMERATING = ("VarLengthExpand(All)", "VarLengthExpand(Into)", "ProjectEndpoints")


def operators(plan: dict[str, Any]) -> list[str]:
    names = [str(plan["operatorType"])]
    for child in plan.get("children", ()):
        names += operators(child)
    return names


REACH_QUERIES = [
    REACH_CASCADE,  # the benchmarks' plain reach, the baseline of `bench perf --only reach`
    queries.load("barrier/withdraw_cascade"),
    queries.load("barrier/count_unwithdrawn"),
    queries.load("barrier/hold_cascade"),
    queries.load("barrier/count_unheld"),
    queries.load("cascade/plan_cascade"),
]


@pytest.mark.parametrize("query", REACH_QUERIES, ids=lambda q: q.name)
def test_reach_is_planned_as_pruning_bfs(memory: MemoryStore, query: Query) -> None:
    params = {p: dummy(p) for p in query.declared}
    if "keys" in params:
        params["keys"] = [f"{memory.ns}/root"]
    ops = operators(memory.store.explain(query, params))
    assert any(op.startswith(PRUNING) for op in ops), ops
    assert not any(op.startswith(ENUMERATING) for op in ops), ops


def test_diamond_ladder_at_depth_40_is_linear(memory: MemoryStore) -> None:
    depth = 40
    root, items = diamond_ladder(depth)
    memory.import_items(items)
    # 2**40 paths: a path-enumerating reach would not return; timing is `bench perf`'s job.
    plan = memory.plan({"id": "ladder", "type": "delete", "roots": [root]})
    assert len(plan.cascade) == 2 * depth + 1
    assert len(plan.family.candidates) == 2 * depth


def dummy(param: str) -> Any:
    """A value of the right shape for each parameter name used in cypher/."""
    if param in ("keys", "uids", "vids", "roots"):
        return ["x/none"]
    if param == "rows":
        return []
    if param in ("figures", "spec_map", "row"):
        return {}
    if param in (
        "limit",
        "fetch",
        "k",
        "cap",
        "dimension",
        "from_id",
        "to_id",
        "texts",
        "lists",
        "skip",
        "scan",
        "window",
        "timeout_s",
    ):
        return 1
    if param in ("kinds", "meta", "roles"):  # search filters; a grant's roles
        return ["x"]
    if param == "vector":
        return [0.6, 0.8]
    if param in ("since", "until"):
        return None
    if param in ("lam", "half_life_s", "now"):
        return 1.0
    if param in ("first", "deferred"):
        return True
    return "x"


EXPLAINABLE = [n for n in queries.all_names() if not n.startswith("schema/")]


@pytest.mark.parametrize("name", EXPLAINABLE)
def test_every_query_file_plans(memory: MemoryStore, name: str) -> None:
    query = queries.load(name)
    params = {p: dummy(p) for p in query.declared}
    plan = memory.store.explain(query, params)
    assert plan.get("operatorType"), name
