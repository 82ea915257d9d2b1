"""Use recording against the real Neo4j (issue 19): serving reads count what they served,
a flush writes the counts (in the background and at close), the switch turns every
write off, only served versions are counted, and erasure leaves no content in them."""

from __future__ import annotations

import time
from typing import Any

from memorepair.api import MemoryStore, open_store
from memorepair.model import artifact_key
from memorepair.settings import Settings
from memorepair.values import READ_USAGE

SECRET = "Ana's passport number is X1234567."
USAGE_FIELDS = {"key", "ns", "uid", "count", "freq", "freq_at", "last_used"}


def _memory(memory: MemoryStore) -> None:
    memory.record({"uid": "pass", "kind": "record", "content": SECRET})
    memory.record(
        {"uid": "trip", "kind": "summary", "content": "Ana flies to Zurich.", "inputs": ["pass"]}
    )
    memory.record({"uid": "other", "kind": "record", "content": "The train leaves at nine."})


def _uses(memory: MemoryStore, *uids: str) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    keys = [artifact_key(memory.ns, u) for u in uids]
    (row,) = memory.store.read(READ_USAGE, ns=memory.ns, keys=keys)
    return row, {u["uid"]: u for u in row["uses"]}


def test_reads_are_counted_and_flushed(memory: MemoryStore) -> None:
    _memory(memory)
    memory.retrieve(uid="trip")
    memory.retrieve(uid="trip")
    memory.search("train leaves", 1, mode="text")
    log, uses = _uses(memory, "trip", "other", "pass")
    assert uses == {}  # buffered: the reads wrote nothing
    assert memory.uses.flush() == 2
    log, uses = _uses(memory, "trip", "other", "pass")
    assert log["reads"] == 3 and log["since"] is not None
    assert uses["trip"]["count"] == 2 and uses["other"]["count"] == 1
    assert 1.99 < uses["trip"]["freq"] <= 2.0  # two reads a moment apart
    assert "pass" not in uses  # never served
    assert set(uses["trip"]) == USAGE_FIELDS


def test_background_flush_and_close(neo4j_settings: Settings) -> None:
    settings = neo4j_settings.model_copy(update={"use_flush_s": 0.2})
    ns = f"t{time.time_ns() % 10**12}"
    with open_store(ns=ns, settings=settings) as memory:
        try:
            _memory(memory)
            memory.retrieve(uid="other")
            deadline = time.monotonic() + 30
            while not _uses(memory, "other")[1] and time.monotonic() < deadline:
                time.sleep(0.1)
            assert _uses(memory, "other")[1]["other"]["count"] == 1
            memory.retrieve(uid="trip")
            memory.uses.flush_s = 3600  # only close can write this one now
        finally:
            memory.uses.close()
            counted = _uses(memory, "trip")[1]
            memory.clear()
    assert counted["trip"]["count"] == 1


def test_switched_off_writes_nothing(neo4j_settings: Settings) -> None:
    settings = neo4j_settings.model_copy(update={"use_recording": False})
    ns = f"t{time.time_ns() % 10**12}"
    with open_store(ns=ns, settings=settings) as memory:
        try:
            _memory(memory)
            memory.retrieve(uid="trip")
            memory.search("train", 2, mode="text")
            assert memory.uses.flush() == 0
            log, uses = _uses(memory, "trip", "other")
            assert log["since"] is None and uses == {}
        finally:
            memory.clear()


def test_only_served_versions_count(memory: MemoryStore) -> None:
    _memory(memory)
    memory.repair({"id": "gone", "type": "delete", "roots": ["pass"]})
    assert memory.retrieve(uid="pass") == []  # deleted: nothing served, nothing counted
    memory.retrieve(uid="missing")
    memory.flush_use()
    assert set(_uses(memory, "pass", "missing", "trip")[1]) <= {"trip"}


def test_erasure_leaves_no_content_in_usage(memory: MemoryStore) -> None:
    _memory(memory)
    memory.retrieve(uid="pass")
    memory.search("passport number", 3, mode="text")
    memory.flush_use()
    memory.forget("pass", event_id="forget-pass")
    _, uses = _uses(memory, "pass", "trip", "other")
    assert "pass" in uses
    for record in uses.values():
        assert set(record) == USAGE_FIELDS
        assert not any("X1234567" in str(v) or "passport" in str(v) for v in record.values())
    assert memory.audit_erasure("forget-pass")["ok"]


def test_plan_and_audit_say_where_w_and_c_came_from(neo4j_settings: Settings) -> None:
    settings = neo4j_settings.model_copy(update={"value_warmup_h": 0.0})
    ns = f"t{time.time_ns() % 10**12}"
    with open_store(ns=ns, settings=settings) as memory:
        try:
            memory.record({"uid": "a", "kind": "record", "content": "Ana likes tea."})
            memory.record({"uid": "b", "kind": "record", "content": "Ana lives in Bern."})
            for uid in ("s1", "s2"):
                memory.record(
                    {"uid": uid, "kind": "summary", "content": f"{uid}: Ana.", "inputs": ["a", "b"]}
                )
            memory.record(
                {"uid": "s3", "kind": "summary", "content": "s3", "inputs": ["a", "b"], "value": 9}
            )
            for _ in range(3):
                memory.retrieve(uid="s1")
            memory.flush_use()
            plan = memory.plan({"id": "p", "type": "delete", "roots": ["a"]}).as_dict()
            got = {c["uid"]: c for c in plan["candidates"]}
            assert got["s1"]["value_source"] == "use" and 11.9 < got["s1"]["value"] <= 12.0
            assert (got["s2"]["value_source"], got["s2"]["value"]) == ("use", 0.0)  # never read
            assert (got["s3"]["value_source"], got["s3"]["value"]) == ("explicit", 9)
            assert {c["cost_source"] for c in got.values()} == {"prior"}
            fix = {"replaces": "a", "content": "Ana likes coffee."}
            memory.repair({"id": "fix", "type": "correct", "roots": ["a"], "replacements": [fix]})
            sets = memory.audit_event("fix")
            published = {i["uid"]: i for i in sets["published"]}
            assert published["s1"]["value_source"] == "use"
            assert published["s1"]["work_s"] > 0  # measured on the successor
            again = memory.plan({"id": "q", "type": "delete", "roots": ["b"]}).as_dict()
            costs = {c["uid"]: (c["cost_source"], c["cost"]) for c in again["candidates"]}
            assert costs["s1"] == ("work", published["s1"]["work_s"])  # seconds, as measured
            # s2 was never read, so not repaired: priced at what this namespace's regen
            # of summaries measured (the running median), not at the shipped prior.
            assert "s2" not in published
            assert costs["s2"][0] == "median" and 0 < costs["s2"][1] < 10
            # A write after the repair (s1 v3, no work measured) keeps the measurement of
            # the last repair that built s1 (v2).
            memory.update("s1", content="s1: Ana, updated.")
            later = memory.plan({"id": "r", "type": "delete", "roots": ["b"]}).as_dict()
            s1 = next(c for c in later["candidates"] if c["uid"] == "s1")
            assert (s1["cost_source"], s1["cost"]) == ("work", published["s1"]["work_s"])
        finally:
            memory.clear()


def test_a_failed_flush_keeps_its_rows_for_the_next(memory: MemoryStore) -> None:
    """A database briefly out of reach costs neither a count nor an exposure record."""
    from neo4j import GraphDatabase

    from memorepair.store import Store

    _memory(memory)
    memory.retrieve(uid="trip")
    memory.retrieve(uid="trip")
    recorder, real = memory.uses, memory.uses.store
    nowhere = "bolt://127.0.0.1:9"  # nothing listens there
    recorder.store = Store(
        GraphDatabase.driver(nowhere, max_transaction_retry_time=0.5),
        nowhere,
        database=real.database,
        batch_size=real.batch_size,
        serving_reads="writer",
        unreachable_hint="the test's unreachable server",
    )
    try:
        recorder.flush_safely()  # what the flusher thread does: logs, keeps the rows
    finally:
        recorder.store.close()
        recorder.store = real
    assert _uses(memory, "trip")[1] == {}  # nothing reached the database
    memory.retrieve(uid="other")
    assert recorder.flush() == 2  # the kept rows first, then the new read
    log, uses = _uses(memory, "trip", "other")
    assert log["reads"] == 3 and uses["trip"]["count"] == 2 and uses["other"]["count"] == 1
    report = memory.forget("trip", reason="the audit reads who saw it")
    seen = {
        (e["uid"], e["version"]): e["reads"] for e in memory.exposure(report.event)["exposures"]
    }
    assert seen[("trip", 1)] == 2
