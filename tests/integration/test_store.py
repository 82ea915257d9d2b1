"""Store helpers that overlap Python with the server, against the real Neo4j."""

from __future__ import annotations

import logging
import threading

import pytest

from memorepair import queries
from memorepair.api import MemoryStore, open_store
from memorepair.errors import InputError
from memorepair.model import ArtifactIn, Kind, artifact_key
from memorepair.store import Tx


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


#: Takes a write lock on one version (a test-only statement, loaded as the engine's are).
LOCK_ONE = queries.parse(
    "test/lock_one",
    "// mode: write\n// params: $vid\n"
    "MATCH (a:Artifact {vid: $vid}) SET a._lock = true REMOVE a._lock RETURN a.vid AS vid",
    "tests/integration/test_store.py",
)


def test_a_deadlock_the_driver_retries_is_counted_and_logged_at_debug(
    memory: MemoryStore, caplog: pytest.LogCaptureFixture
) -> None:
    """Two transactions take the same two locks in opposite orders: Neo4j aborts one with
    DeadlockDetected and the driver runs it again. That success must not print the
    driver's warning (it looked like a failure in the middle of the demo); it is logged
    at debug and counted, so `--json` reports can say how many were retried."""
    memory.record({"uid": "x", "kind": "record", "content": "x"})
    memory.record({"uid": "y", "kind": "record", "content": "y"})
    vids = [f"{memory.ns}/x@1", f"{memory.ns}/y@1"]
    both_locked_one = threading.Barrier(2, timeout=30)
    store = memory.store
    before = store.retried_transactions

    def locker(first: str, second: str) -> None:
        attempts = 0

        def work(tx: Tx) -> None:
            nonlocal attempts
            attempts += 1
            tx.run(LOCK_ONE, vid=first)
            if attempts == 1:
                both_locked_one.wait()  # each holds one lock, then asks for the other's
            tx.run(LOCK_ONE, vid=second)

        store.transaction(work)

    caplog.set_level(logging.DEBUG)
    threads = [
        threading.Thread(target=locker, args=(vids[0], vids[1])),
        threading.Thread(target=locker, args=(vids[1], vids[0])),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert store.retried_transactions - before == 1
    loud = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert loud == [], [r.getMessage()[:120] for r in loud]
    quiet = [r for r in caplog.records if r.name.startswith("memorepair")]
    assert any("DeadlockDetected" in r.getMessage() for r in quiet)
    assert all(r.levelno == logging.DEBUG for r in quiet)


def test_a_repair_report_counts_retried_transactions(memory: MemoryStore) -> None:
    memory.record({"uid": "x", "kind": "record", "content": "x"})
    report = memory.forget("x", event_id="gone")
    assert report.as_dict()["retried_transactions"] == report.retried == 0


def test_a_resized_view_shares_the_driver_bookmarks_and_write_tally(memory: MemoryStore) -> None:
    """A repair writes through `Store.resized`: a search on the original must still know
    the view wrote (it awaits the full-text index when `writes` moved) and read after it."""
    store = memory.store
    view = store.resized(2)
    assert (view.batch_size, store.batch_size) == (2, memory.settings.batch_size)
    assert list(view.batched([1, 2, 3])) == [[1, 2], [3]]
    before = store.writes
    vid = f"{memory.ns}/v1@1"
    memory.import_items([ArtifactIn(uid="v1", kind=Kind.RECORD, content="v")])
    assert view.write(LOCK_ONE, vid=vid) == [{"vid": vid}]  # it reads after the import
    assert store.writes == view.writes > before + 1
    assert store.bookmarks() == view.bookmarks()
    with pytest.raises(InputError, match="at least one row"):
        store.resized(0)
