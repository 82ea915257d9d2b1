"""The batch API (`record_many`), the one-statement `record` and deferred embeddings,
against the real server: same rules as `record`, all or none, errors that name the item."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from memorepair import embedding, queries
from memorepair.api import MemoryStore, open_store
from memorepair.errors import InputError, UnknownArtifactError
from memorepair.model import ArtifactIn, Kind

TARGETS = queries.load("serving/reindex/reindex_targets")
SYNCHRONOUS_SEARCH_INDEX = queries.named(
    "create_synchronous_search_index",
    root=Path(__file__).parents[2] / "bench" / "cypher",
    label="bench/cypher",
)


def _served(memory: MemoryStore) -> int:
    return memory.counts()["live"]


def test_record_many_writes_items_with_inputs_in_and_out_of_the_call(
    memory: MemoryStore,
) -> None:
    memory.record({"uid": "policy", "kind": "record", "content": "refunds in 30 days"})
    items: list[dict[str, Any]] = [
        {"uid": "sum", "kind": "summary", "content": "summary", "inputs": ["note-2", "policy@1"]},
        *({"uid": f"note-{i}", "kind": "record", "content": f"note {i}"} for i in range(5)),
    ]
    report = memory.record_many(items)
    assert (report.written, report.live, report.withdrawn_late) == (6, 6, [])
    (summary,) = memory.retrieve(uid="sum")
    assert summary.inputs == ["note-2", "policy"]
    lineage = memory.lineage("sum")
    assert [row["version"] for row in lineage] == [1]
    assert _served(memory) == 7


def test_record_many_names_the_bad_item_and_field_and_writes_nothing(
    memory: MemoryStore,
) -> None:
    items = [
        {"uid": "a", "kind": "record", "content": "x"},
        {"uid": "b", "kind": "record", "content": "y"},
        {"uid": "c", "kind": "nonsense", "content": "z"},
    ]
    with pytest.raises(InputError, match=r"item 3 \(uid 'c'\): field 'kind'"):
        memory.record_many(items)
    with pytest.raises(InputError, match=r"item 2: uid 'a' is already item 1"):
        memory.record_many([items[0], items[0]])
    with pytest.raises(InputError, match=r"item 2: expected an artifact"):
        memory.record_many([items[0], "not a mapping"])  # type: ignore[list-item]
    with pytest.raises(InputError, match="'ghost'"):
        memory.record_many([items[0], {**items[1], "inputs": ["ghost"]}])
    assert _served(memory) == 0


@pytest.mark.parametrize("tx_items", [2, 50_000], ids=["staged", "one-transaction"])
def test_record_many_writes_nothing_when_its_last_batch_fails(
    memory: MemoryStore, tx_items: int
) -> None:
    """Staged, the committed batches are taken back; in one transaction of several
    statements (batches of 2), the failing last statement rolls back the earlier ones."""
    memory.record({"uid": "base", "kind": "record", "content": "base"})
    small = memory.settings.model_copy(update={"batch_size": 2, "import_tx_items": tx_items})
    items = [ArtifactIn(uid=f"r{i}", kind=Kind.RECORD, content=f"r{i}") for i in range(6)]
    # a pin to a version that never existed is found while writing the last batch
    items.append(ArtifactIn(uid="bad", kind=Kind.SUMMARY, content="s", inputs=["base@7"]))
    with (
        open_store(ns=memory.ns, settings=small) as store,
        pytest.raises(UnknownArtifactError, match=r"base@7 does not exist"),
    ):
        store.record_many(items)
    assert _served(memory) == 1  # only `base`
    assert memory.resume_imports() == []  # nothing staged left behind either


def test_record_many_up_to_import_tx_items_is_one_transaction_of_batch_statements(
    memory: MemoryStore,
) -> None:
    """Nine items in batches of 2, within MEMOREPAIR_IMPORT_TX_ITEMS: one transaction (no
    import record), five statements; inputs in earlier statements, in the same one and
    outside the call are linked, and an item written withdrawn (a stale pin) withdraws
    what derives from it in a later statement."""
    memory.record({"uid": "base", "kind": "record", "content": "base"})
    memory.update("base", content="base, corrected")  # base@1 is not served now
    small = memory.settings.model_copy(update={"batch_size": 2, "import_tx_items": 9})
    items: list[dict[str, Any]] = [
        *({"uid": f"r{i}", "kind": "record", "content": f"r{i}"} for i in range(5)),
        {"uid": "late", "kind": "summary", "content": "l", "inputs": ["base@1"]},
        {"uid": "s0", "kind": "summary", "content": "s0", "inputs": ["r0", "r4", "base"]},
        {"uid": "s1", "kind": "summary", "content": "s1", "inputs": ["s0", "r1"]},
        {"uid": "s2", "kind": "summary", "content": "s2", "inputs": ["late", "r2"]},
    ]
    with open_store(ns=memory.ns, settings=small) as store:
        report = store.record_many(items)
    assert report.import_id is None  # not staged
    assert (report.written, report.live, sorted(report.withdrawn_late)) == (9, 7, ["late", "s2"])
    assert memory.retrieve(uid="s1")[0].inputs == ["s0", "r1"]
    assert [r["version"] for r in memory.lineage("s1")] == [1]
    assert memory.served(["late", "s2"]) == {}
    assert _served(memory) == 1 + 7
    assert memory.status()["open_imports"] == []


def test_record_is_one_statement_with_the_same_refusals(memory: MemoryStore) -> None:
    memory.record({"uid": "a", "kind": "record", "content": "Ana prefers aisle seats"})
    with pytest.raises(InputError, match="'a' already exists"):
        memory.record({"uid": "a", "kind": "record", "content": "again"})
    with pytest.raises(UnknownArtifactError, match="'zz'"):
        memory.record({"uid": "b", "kind": "summary", "content": "s", "inputs": ["zz", "a"]})
    with pytest.raises(UnknownArtifactError, match="a@2 does not exist"):
        memory.record({"uid": "c", "kind": "summary", "content": "s", "inputs": ["a@2"]})
    row = memory.record({"uid": "d", "kind": "summary", "content": "s", "inputs": ["a@1"]})
    assert row == {
        "vid": f"{memory.ns}/d@1",
        "uid": "d",
        "live": True,
        "held_by": None,
        "redacted": None,
    }
    assert _served(memory) == 2


def test_deferred_embeddings_land_and_this_process_finds_what_it_recorded(
    memory: MemoryStore,
) -> None:
    assert memory.settings.record_embedding == "deferred"
    memory.record({"uid": "seat", "kind": "record", "content": "Ana prefers aisle seats"})
    memory.record_many(
        [{"uid": f"n{i}", "kind": "record", "content": f"invoice {i} paid"} for i in range(20)]
    )
    hits = memory.search("aisle seat preference", 3, mode="vector")  # flushes first
    assert hits and hits[0].uid == "seat"
    memory.flush_embeddings()
    models = {row["vid"]: row["model"] for row in memory.store.read(TARGETS, ns=memory.ns)}
    assert len(models) == 21
    assert set(models.values()) == {_model(memory)}


def _model(memory: MemoryStore) -> str:
    space = embedding.space_of(memory.embedder)
    assert space is not None
    return space.model


def test_retrieve_by_substring_stops_at_limit_within_its_scan_bound(
    memory: MemoryStore,
) -> None:
    memory.record_many(
        [{"uid": f"u{i:02d}", "kind": "record", "content": f"Note {i}"} for i in range(12)]
    )
    bounded = memory.settings.model_copy(update={"retrieve_scan": 5})
    with open_store(ns=memory.ns, settings=bounded) as store:
        found = store.retrieve(text="note", limit=3)  # three within the first five uids
        assert [a.uid for a in found] == ["u00", "u01", "u02"]


def test_retrieve_refuses_an_answer_cut_short_by_its_scan_bound(memory: MemoryStore) -> None:
    memory.record_many(
        [{"uid": f"u{i:02d}", "kind": "record", "content": f"Note {i}"} for i in range(12)]
    )
    bounded = memory.settings.model_copy(update={"retrieve_scan": 5})
    with open_store(ns=memory.ns, settings=bounded) as store:
        with pytest.raises(InputError, match="MEMOREPAIR_RETRIEVE_SCAN=5"):
            store.retrieve(text="note 11", limit=5)
        assert [a.uid for a in store.retrieve(text="note 1", limit=1)] == ["u01"]
    assert [a.uid for a in memory.retrieve(text="note 11")] == ["u11"]


@pytest.mark.serial
def test_schema_apply_replaces_a_synchronous_full_text_index(memory: MemoryStore) -> None:
    """Databases of earlier builds update `artifact_search` inside each commit."""
    store = memory.store
    store.write(queries.load("store/drop_search_index"))
    store.write(SYNCHRONOUS_SEARCH_INDEX)
    assert store.read(queries.load("store/search_index_synchronous"))[0]["synchronous"]
    memory.apply_schema()
    assert not store.read(queries.load("store/search_index_synchronous"))[0]["synchronous"]
    memory.record({"uid": "seat", "kind": "record", "content": "Ana prefers aisle seats"})
    assert [hit.uid for hit in memory.search("aisle", 3, mode="text")] == ["seat"]


def test_import_items_refuses_two_items_with_one_uid(memory: MemoryStore) -> None:
    # `import` and `record_many` refuse a uid given twice; so does the API they share
    items = [
        ArtifactIn(uid="a", kind=Kind.RECORD, content="first"),
        ArtifactIn(uid="b", kind=Kind.RECORD, content="other"),
        ArtifactIn(uid="a", kind=Kind.RECORD, content="second"),
    ]
    with pytest.raises(InputError, match=r"item 3: uid 'a' is already item 1"):
        memory.import_items(items)
    assert _served(memory) == 0  # nothing was written
