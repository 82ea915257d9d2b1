"""The LangGraph store against the real Neo4j, through LangGraph's own types (and LangMem's
store-facing tools): served versions only, provenance, cascades, filters, namespaces."""

from __future__ import annotations

import asyncio
import json
from datetime import datetime

import pytest
from langgraph.store.base import (
    GetOp,
    Item,
    ListNamespacesOp,
    MatchCondition,
    PutOp,
    SearchItem,
    SearchOp,
)

from memorepair.api import MemoryStore
from memorepair.errors import InputError
from memorepair.integrations.langgraph import MemoRepairStore

TURNS = ("users", "ana", "turns")
NOTES = ("users", "ana", "notes")
HOTEL = "Ana's hotel in Zurich costs 180 CHF per night."
PREF = "Ana prefers prices shown in CHF while she is in Switzerland."


@pytest.fixture
def store(memory: MemoryStore) -> MemoRepairStore:
    return MemoRepairStore(memory)


def summary(*lines: tuple[str, str]) -> str:
    return "\n".join(f"- {text} [{uid}@v1]" for uid, text in lines)


def test_put_get_round_trip_with_langgraph_types(store: MemoRepairStore) -> None:
    store.put(TURNS, "t1", {"content": PREF, "speaker": "user"})
    store.put(("profiles",), "ana", {"name": "Ana", "age": 41, "tags": ["travel"]})
    item = store.get(TURNS, "t1")
    assert isinstance(item, Item) and not isinstance(item, SearchItem)
    assert item.namespace == TURNS and item.key == "t1"
    assert item.value == {"content": PREF, "speaker": "user"}
    assert isinstance(item.created_at, datetime) and item.updated_at >= item.created_at
    profile = store.get(("profiles",), "ana")
    assert profile is not None and profile.value == {"name": "Ana", "age": 41, "tags": ["travel"]}
    assert store.get(TURNS, "missing") is None
    # batch with LangGraph's ops, results in op order
    results = store.batch(
        [GetOp(TURNS, "t1"), PutOp(TURNS, "t2", {"content": HOTEL}), GetOp(TURNS, "t2")]
    )
    assert results[0] == item and results[1] is None
    assert isinstance(results[2], Item) and results[2].value["content"] == HOTEL
    assert store.memory.retrieve(uid="users/ana/turns/t1")[0].content == PREF


def test_delete_withdraws_what_was_derived_and_get_never_returns_it(
    store: MemoRepairStore,
) -> None:
    store.put(TURNS, "t1", {"content": PREF})
    store.put(TURNS, "t2", {"content": HOTEL})
    derived = summary(("users/ana/turns/t1", PREF), ("users/ana/turns/t2", HOTEL))
    store.put(
        NOTES,
        "trip",
        {"content": derived, "inputs": [[*TURNS, "t1"], [*TURNS, "t2"]], "topic": "trip"},
    )
    pinned = store.pin(NOTES, "trip")
    assert pinned == "users/ana/notes/trip@1"
    first = store.search(("users", "ana"), query="hotel Zurich per night", limit=10)
    assert {(i.namespace, i.key) for i in first} >= {(TURNS, "t2"), (NOTES, "trip")}

    store.delete(TURNS, "t2")  # the user's erasure request

    assert store.get(TURNS, "t2") is None
    note = store.get(NOTES, "trip")
    assert note is not None and HOTEL not in note.value["content"]
    assert PREF in note.value["content"] and note.value["topic"] == "trip"
    for query in ("hotel Zurich per night", "180 CHF", "Ana"):
        for item in store.search((), query=query, limit=50):
            assert HOTEL not in json.dumps(item.value), query
            assert (item.namespace, item.key) != (TURNS, "t2")
    assert store.pin(NOTES, "trip") == "users/ana/notes/trip@2"
    assert store.memory.stale_served() == []
    store.delete(TURNS, "t2")  # deleting again is a no-op, as in LangGraph


def test_put_after_delete_recreates_the_key(store: MemoRepairStore) -> None:
    store.put(TURNS, "t2", {"content": HOTEL})
    store.delete(TURNS, "t2")
    assert store.get(TURNS, "t2") is None
    store.put(TURNS, "t2", {"content": "Ana moved to a hotel by the station."})  # re-created
    item = store.get(TURNS, "t2")
    assert item is not None and (item.namespace, item.key) == (TURNS, "t2")
    assert item.value == {"content": "Ana moved to a hotel by the station."}
    found = store.search(TURNS, query="hotel by the station", limit=5)
    assert [(i.namespace, i.key) for i in found][:1] == [(TURNS, "t2")]
    # the deleted item's uid is never reused: the audit trail keeps it, erased
    assert store.memory.lineage("users/ana/turns/t2")[-1]["visibility"] == "Removed"
    store.put(NOTES, "n", {"content": "station hotel", "inputs": [[*TURNS, "t2"]]})
    assert store.get(NOTES, "n") is not None
    store.put(TURNS, "t2", {"content": "Ana moved again."})  # an update of the new item
    assert store.get(TURNS, "t2").value == {"content": "Ana moved again."}  # type: ignore[union-attr]
    store.delete(TURNS, "t2")
    assert store.get(TURNS, "t2") is None and store.get(NOTES, "n") is None
    store.put(TURNS, "t2", {"content": "third time"})
    assert store.get(TURNS, "t2").value == {"content": "third time"}  # type: ignore[union-attr]
    assert [i.key for i in store.search(TURNS, limit=10)] == ["t2"]


def test_index_false_is_not_embedded_nor_ranked_by_meaning_but_gettable(
    store: MemoRepairStore,
) -> None:
    store.put(NOTES, "plain", {"content": HOTEL}, index=False)
    store.put(NOTES, "indexed", {"content": "Ana's hotel in Zurich is near the lake."})
    item = store.get(NOTES, "plain")
    assert item is not None and item.value == {"content": HOTEL}
    store.memory.flush_embeddings()
    with store.memory.store.driver.session(database=store.memory.store.database) as session:
        rows = session.run(
            "MATCH (a:Artifact {ns: $ns}) RETURN a.uid AS uid, a.embedding IS NOT NULL AS e",
            ns=store.memory.ns,
        ).data()
    assert {r["uid"]: r["e"] for r in rows} == {
        "users/ana/notes/plain": False,
        "users/ana/notes/indexed": True,
    }
    found = store.search(NOTES, query="hotel in Zurich per night", limit=5)
    ranked = [i.key for i in found if i.score is not None]
    assert ranked == ["indexed"]  # the plain item is never ranked, by meaning or words
    assert [(i.key, i.score) for i in found if i.key == "plain"] in ([], [("plain", None)])
    store.put(NOTES, "plain", {"content": HOTEL + " Breakfast included."}, index=False)
    assert store.get(NOTES, "plain").value == {  # type: ignore[union-attr]
        "content": HOTEL + " Breakfast included."
    }
    with store.memory.store.driver.session(database=store.memory.store.database) as session:
        embedded = session.run(
            "MATCH (a:Artifact {ns: $ns, uid: 'users/ana/notes/plain'}) "
            "WHERE a.embedding IS NOT NULL RETURN count(a) AS n",
            ns=store.memory.ns,
        ).single()
    assert embedded is not None and embedded["n"] == 0  # the update is not embedded either


def test_a_bare_key_in_inputs_resolves_or_says_how_to_cite(store: MemoRepairStore) -> None:
    store.put(TURNS, "t1", {"content": PREF})
    store.put(TURNS, "sum", {"content": summary(("users/ana/turns/t1", PREF)), "inputs": ["t1"]})
    assert store.memory.lineage("users/ana/turns/sum")[0]["inputs"] == ["users/ana/turns/t1@1"]
    with pytest.raises(InputError) as refused:
        store.put(TURNS, "sum2", {"content": "x", "inputs": ["nope"]})
    message = str(refused.value)
    assert "'nope'" in message and "[*namespace, key]" in message and "store.pin" in message
    assert "['users', 'ana', 'turns', 'nope']" in message


def test_second_put_is_an_update_with_its_cascade(store: MemoRepairStore) -> None:
    store.put(TURNS, "t1", {"content": PREF})
    store.put(
        NOTES,
        "n",
        {"content": summary(("users/ana/turns/t1", PREF)), "inputs": ["users/ana/turns/t1@1"]},
    )
    events = len(store.memory.audit_events())
    store.put(TURNS, "t1", {"content": PREF})  # the same value: nothing happens
    assert len(store.memory.audit_events()) == events
    corrected = "Ana prefers prices shown in EUR everywhere."
    store.put(TURNS, "t1", {"content": corrected})
    assert store.get(TURNS, "t1").value == {"content": corrected}  # type: ignore[union-attr]
    note = store.get(NOTES, "n")
    assert note is not None and corrected in note.value["content"] and "CHF" not in str(note.value)
    (event,) = [e for e in store.memory.audit_events() if e["type"] == "correct"]
    assert event["status"] == "completed"


def test_search_filters_with_operators_never_return_fewer_than_exist(
    store: MemoRepairStore,
) -> None:
    ns = ("reviews",)
    for n in range(40):
        store.put(
            ns,
            f"r{n:02d}",
            {
                "content": f"Review {n} of a quiet restaurant in Zurich.",
                "stars": n % 8,
                "city": "Zurich" if n % 2 else "Basel",
            },
        )
    store.put(("other",), "x", {"content": "A quiet restaurant in Zurich.", "stars": 7})
    passing = {f"r{n:02d}" for n in range(40) if n % 8 == 7}
    found = store.search(
        ns, query="quiet restaurant Zurich", filter={"stars": {"$gte": 7}}, limit=10
    )
    assert {i.key for i in found} == passing  # 5 of 40: all of them, none from ("other",)
    (via_op,) = store.batch(
        [SearchOp(ns, {"stars": {"$gte": 7}}, limit=10, query="quiet restaurant Zurich")]
    )
    assert [i.key for i in via_op] == [i.key for i in found]  # type: ignore[union-attr]
    assert all(isinstance(i, SearchItem) and i.score is not None for i in found)
    eq = store.search(
        ns, query="restaurant", filter={"city": "Basel", "stars": {"$lt": 2}}, limit=20
    )
    assert {i.key for i in eq} == {f"r{n:02d}" for n in range(40) if n % 2 == 0 and n % 8 < 2}
    ne = store.search(ns, filter={"city": {"$ne": "Zurich"}}, limit=100)
    assert len(ne) == 20 and all(i.value["city"] == "Basel" for i in ne)
    page = store.search(ns, filter={"stars": {"$gt": 5, "$lte": 6}}, limit=3, offset=2)
    assert len(page) == 3  # 10 items have 6 stars; the third to fifth
    everything = store.search(ns, query="restaurant", limit=100)
    assert len(everything) == 40


def test_list_namespaces_and_escaped_addresses(store: MemoRepairStore) -> None:
    odd = ("users", "Zoë Müller", "a/b@2")
    store.put(odd, "k@3", {"content": "escaped"})
    store.put(TURNS, "t1", {"content": PREF})
    store.put(("docs",), "d1", {"content": "doc"})
    item = store.get(odd, "k@3")
    assert item is not None and item.namespace == odd and item.key == "k@3"
    assert store.list_namespaces() == [("docs",), odd, TURNS]  # sorted: "Z" < "a"
    assert store.list_namespaces(prefix=("users",)) == [odd, TURNS]
    assert store.list_namespaces(suffix=("turns",)) == [TURNS]
    assert store.list_namespaces(prefix=("users", "*", "turns")) == [TURNS]
    assert store.list_namespaces(max_depth=1) == [("docs",), ("users",)]
    assert store.batch([ListNamespacesOp((MatchCondition("prefix", ("docs",)),))]) == [[("docs",)]]
    with pytest.raises(InputError, match="not a valid uid"):
        store.put(("_hidden",), "k", {"content": "x"})


def test_async_ops(store: MemoRepairStore) -> None:
    async def main() -> tuple[Item | None, list[SearchItem]]:
        await store.aput(TURNS, "t1", {"content": PREF})
        return await store.aget(TURNS, "t1"), await store.asearch(TURNS, query="CHF")

    got, found = asyncio.run(main())
    assert got is not None and got.value["content"] == PREF
    assert [i.key for i in found] == ["t1"]


def test_langmem_tools_on_the_store(store: MemoRepairStore) -> None:
    from langmem import create_manage_memory_tool, create_search_memory_tool

    manage = create_manage_memory_tool(namespace=("memories", "ana"), store=store)
    search = create_search_memory_tool(namespace=("memories", "ana"), store=store)
    created = manage.invoke({"content": "Ana is vegetarian.", "action": "create"})
    memory_id = created.split()[-1]
    hits = json.loads(search.invoke({"query": "vegetarian"}))
    assert [h["value"] for h in hits] == [{"content": "Ana is vegetarian."}]
    assert hits[0]["key"] == memory_id and hits[0]["namespace"] == ["memories", "ana"]
    manage.invoke({"content": "Ana is vegan.", "action": "update", "id": memory_id})
    hits = json.loads(search.invoke({"query": "Ana diet vegan vegetarian"}))
    assert [h["value"] for h in hits] == [{"content": "Ana is vegan."}]
    manage.invoke({"action": "delete", "id": memory_id})
    assert json.loads(search.invoke({"query": "vegan"})) == []
    assert store.get(("memories", "ana"), memory_id) is None
    lineage = store.memory.lineage(f"memories/ana/{memory_id}")
    assert [v["visibility"] for v in lineage] == ["Superseded", "Removed"]


def test_reads_record_use_of_what_they_return(store: MemoRepairStore) -> None:
    """get and search count the items they return (docs/values.md); a put's own reads,
    a missing key and search hits dropped by the filter count nothing."""
    from memorepair.model import artifact_key
    from memorepair.values import READ_USAGE

    store.put(TURNS, "t1", {"content": PREF, "speaker": "user"})
    store.put(TURNS, "t2", {"content": HOTEL, "speaker": "agent"})
    store.get(TURNS, "t1")
    store.get(TURNS, "missing")
    found = store.search(TURNS, query="hotel", filter={"speaker": "user"})
    assert [i.key for i in found] == ["t1"]
    store.memory.flush_use()
    memory = store.memory
    keys = [artifact_key(memory.ns, f"users/ana/turns/{k}") for k in ("t1", "t2", "missing")]
    (row,) = memory.store.read(READ_USAGE, ns=memory.ns, keys=keys)
    counts = {u["uid"]: u["count"] for u in row["uses"]}
    assert counts == {"users/ana/turns/t1": 2}
