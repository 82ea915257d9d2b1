"""The perf bench's write floor does the work it claims, so its figure is a fair yardstick.

`write_floor` is what the 100k-descendant target is read against; a floor that skipped
writes would make the engine look slower than it is and the target look out of reach.
"""

from __future__ import annotations

from bench.perf import FLOOR_STEPS, HUB, layered_memory, write_floor

from memorepair.api import MemoryStore
from memorepair.model import artifact_key


def test_write_floor_versions_the_whole_cascade_with_its_edges(memory: MemoryStore) -> None:
    memory.import_items(layered_memory(300))
    hub = artifact_key(memory.ns, HUB)
    before = memory.store.driver.execute_query(
        "MATCH (:Head {key: $hub})-[:INFLUENCES*0..]->(d:Head) WITH DISTINCT d "
        "RETURN d.key AS key, d.version AS version, coalesce(size(d.inputs), 0) AS inputs",
        hub=hub,
    ).records
    assert len(before) > 100  # the hub's cascade is about half the memory

    seconds = write_floor(memory, [hub], run=1)

    assert list(seconds) == list(FLOOR_STEPS)
    assert all(s >= 0 for s in seconds.values())
    after = {
        r["key"]: r
        for r in memory.store.driver.execute_query(
            "UNWIND $keys AS k MATCH (new:Head {key: k})-[:SUPERSEDES]->(old:Superseded) "
            "WHERE NOT old:Head AND NOT old:Live "
            "RETURN k AS key, new.version AS version, new:Live AS live, "
            "COUNT { (:Head)-[:INFLUENCES]->(new) } AS edges, "
            "COUNT { (:RepairEvent)-[:WITHDREW]->(old) } AS withdrew",
            keys=[r["key"] for r in before],
        ).records
    }
    assert set(after) == {r["key"] for r in before}
    for r in before:
        new = after[r["key"]]
        assert new["version"] == r["version"] + 1
        assert new["live"] is True
        assert new["edges"] == r["inputs"], r["key"]  # every input, from its current version
        assert new["withdrew"] == 1
