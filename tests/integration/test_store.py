"""Store helpers that overlap Python with the server, against the real Neo4j."""

from __future__ import annotations

from memorepair import queries
from memorepair.api import MemoryStore, open_store
from memorepair.model import ArtifactIn, Kind, artifact_key


def test_read_batches_returns_every_batch_in_order(memory: MemoryStore) -> None:
    uids = [f"r{i:02d}" for i in range(11)]
    memory.import_items([ArtifactIn(uid=u, kind=Kind.RECORD, content=u) for u in uids])
    keys = [artifact_key(memory.ns, u) for u in uids] + [artifact_key(memory.ns, "absent")]
    small = memory.settings.model_copy(update={"batch_size": 3})
    with open_store(ns=memory.ns, settings=small) as store:
        batches = list(store.store.read_batches(queries.load("store/heads"), "keys", keys))
    assert len(batches) == 4  # 12 keys in batches of 3, read two at a time
    got = [{row["uid"] for row in batch} for batch in batches]
    assert got == [set(uids[0:3]), set(uids[3:6]), set(uids[6:9]), set(uids[9:11])]
