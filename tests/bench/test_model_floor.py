"""The identity model's republish leaves every audit answer as today's model does.

`bench/model_floor` claims that the identity model (influence edges between one node per
uid, the versions read recorded on each version) answers the audit queries exactly like
today's model after the same event; its figures only count if that holds. Here real
engine events (a delete with removals, failed validations and blocked successors, then a
correct whose cascade meets what the first left withdrawn) are replayed on the identity
model and both models' answers compared with `audit_differences`, which must also catch a
wrong identity graph or a wrong recorded read.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from bench.model_floor import (
    apply_identity_schema,
    audit_differences,
    current_path_reach,
    event_fates,
    import_identity_model,
    reach_uids,
    republish,
)
from bench.perf import HUB, REACH_CASCADE, NoOpOperator, layered_memory, write_floor

from memorepair.api import MemoryStore, open_store
from memorepair.model import Mode, artifact_key
from memorepair.operators.base import RepairContext, Successor, Validation
from memorepair.settings import Settings

N = 300
BEHIND = "MATCH (:Identity {ns: $ns})-[r:INFLUENCED]->() RETURN count(r) AS n"


class FailSome(NoOpOperator):
    """A no-op operator whose successors of some uids fail validation."""

    def __init__(self, mode: Mode, failing: set[str]) -> None:
        super().__init__(mode)
        self.failing = failing

    def validate(self, ctx: RepairContext, successor: Successor) -> Validation:
        if ctx.artifact.uid in self.failing:
            return Validation(False, "rejected by the test")
        return Validation(True)


@pytest.fixture
def pair(
    memory: MemoryStore, neo4j_settings: Settings
) -> Iterator[tuple[MemoryStore, MemoryStore]]:
    """Today's model in `memory`, the identity model in a sibling namespace, same memory."""
    alt = open_store(ns=f"{memory.ns}i", settings=neo4j_settings)
    try:
        apply_identity_schema(alt)
        items = layered_memory(N)
        memory.import_items(items)
        import_identity_model(alt, items)
        yield memory, alt
    finally:
        alt.clear()
        alt.close()


def count(memory: MemoryStore, cypher: str) -> int:
    records = memory.store.driver.execute_query(cypher, ns=memory.ns).records
    return int(records[0]["n"])


def replay(today: MemoryStore, alt: MemoryStore, event: dict[str, Any]) -> None:
    """Run `event` through the engine on today's model, then replay it on the identity model."""
    today.repair(event)
    roots = [artifact_key(alt.ns, uid) for uid in event["roots"]]
    republish(alt, roots, event["id"], event_fates(today, event["id"]))
    mirror_erasure(today, alt)


def mirror_erasure(today: MemoryStore, alt: MemoryStore) -> None:
    """Mark on the identity model the versions the engine's erasure step redacted.

    Erasure is a content step after publication, the same in both models; the study is
    about lineage and reach, so the replay copies its mark (`erased_by`, which the model's
    lineage reads) instead of re-deriving it. The text stays: the bench's no-op successors
    copy the replaced version's content, which a real operator would rebuild.
    """
    erased = today.store.driver.execute_query(
        "MATCH (a:Artifact {ns: $ns}) WHERE a.erased_by IS NOT NULL "
        "RETURN a.uid + '@' + toString(a.version) AS v",
        ns=today.ns,
    ).records
    alt.store.driver.execute_query(
        "UNWIND $vids AS vid MATCH (a:Artifact {vid: $ns + '/' + vid}) SET a.erased_by = 'mirror'",
        vids=[r["v"] for r in erased],
        ns=alt.ns,
    )


def test_replayed_engine_events_leave_the_same_audit_answers(
    pair: tuple[MemoryStore, MemoryStore],
) -> None:
    today, alt = pair
    failing = {f"sum-{i}" for i in range(0, N, 7)} | {f"skill-{i}" for i in range(0, N, 5)}
    for mode in (Mode.RECOMPUTE, Mode.REGEN, Mode.PARAM):
        today.register_operator(FailSome(mode, failing), first=True)
    uids = [f"rec-{i}" for i in range(1, int(N * 0.4))]
    everything = [
        r["uid"]
        for r in today.store.driver.execute_query(
            "MATCH (a:Head {ns: $ns}) RETURN a.uid AS uid", ns=today.ns
        ).records
    ]
    assert audit_differences(today, alt, [], everything, roots=everything) == []

    replay(today, alt, {"id": "evt-delete", "type": "delete", "roots": [HUB]})
    outcomes = {f.outcome for f in event_fates(today, "evt-delete").values()}
    assert {"root_deleted", "removed", "published", "failed", "blocked"} <= outcomes
    # successors that dropped a removed input, and readers left behind a republished input
    assert (
        count(
            alt,
            "MATCH (a:Live {ns: $ns}) WHERE size(a.reads) < "
            "size([(a)-[:SUPERSEDES]->(o) | o][0].reads) RETURN count(a) AS n",
        )
        > 0
    )
    assert count(alt, BEHIND) > 0
    assert audit_differences(today, alt, ["evt-delete"], everything, roots=everything) == []

    # Today's reach also passes through superseded versions, the identity model's does not:
    # the two differ, for many roots now, only in leftovers out of serving (checked above).
    history = {u: reach_uids(today, REACH_CASCADE, u) - current_path_reach(today, u) for u in uids}
    assert any(history.values())
    # A second event where the two reaches agree, taking over leftovers of the first and,
    # validation passing now, republishing them from the current versions of their inputs.
    left = {r["uid"] for r in today.still_withdrawn()}
    second = next(u for u in uids if not history[u] and left & current_path_reach(today, u))
    trailing = count(alt, BEHIND)
    failing.clear()
    replay(
        today,
        alt,
        {
            "id": "evt-correct",
            "type": "correct",
            "roots": [second],
            "replacements": [{"replaces": second, "content": "corrected"}],
        },
    )
    fates = event_fates(today, "evt-correct")
    assert {u for u, f in fates.items() if f.outcome == "published"} & left
    assert count(alt, BEHIND) < trailing
    events = ["evt-delete", "evt-correct"]
    assert audit_differences(today, alt, events, everything, roots=everything) == []


def test_the_comparison_catches_a_wrong_identity_graph_and_a_wrong_read(
    pair: tuple[MemoryStore, MemoryStore],
) -> None:
    today, alt = pair
    write_floor(today, [artifact_key(today.ns, HUB)], run=1)
    republish(alt, [artifact_key(alt.ns, HUB)], "bench-floor-1")
    cache = alt.store.driver.execute_query(  # a successor that read the hub's successor
        "MATCH (a:Live {ns: $ns}) "
        "WHERE any(k IN range(0, size(a.inputs) - 1) WHERE a.inputs[k] = $hub AND a.reads[k] = 2) "
        "RETURN a.uid AS uid LIMIT 1",
        ns=alt.ns,
        hub=HUB,
    ).records[0]["uid"]
    sample = ["rec-1", cache, "sum-2", "skill-4", HUB]
    assert audit_differences(today, alt, ["bench-floor-1"], sample, roots=[HUB]) == []

    # an influence edge the identity graph lost: the barrier would miss what hangs below it
    lost = alt.store.driver.execute_query(
        "MATCH (:Identity {key: $hub})-[r:INFLUENCES]->(c:Identity) "
        "WITH r, c LIMIT 1 DELETE r RETURN c.uid AS uid",
        hub=artifact_key(alt.ns, HUB),
    ).records[0]["uid"]
    found = audit_differences(today, alt, [], [], roots=[HUB])
    assert any(f.startswith("identity graph") and lost in f for f in found), found
    # a version that records an old read: lineage and the barrier invariant both see it
    alt.store.driver.execute_query(
        "MATCH (a:Live {key: $key}) SET a.reads = [k IN range(0, size(a.reads) - 1) | "
        "CASE WHEN a.inputs[k] = $hub THEN 1 ELSE a.reads[k] END]",
        key=artifact_key(alt.ns, cache),
        hub=HUB,
    )
    found = audit_differences(today, alt, [], [cache])
    assert any(f.startswith(f"lineage {cache}") for f in found), found
    assert any(f.startswith("stale-served (identity)") for f in found), found
