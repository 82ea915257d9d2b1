"""Past one machine, on one server: `neo4j://` routing, bookmarks, where serving reads go.

A routing driver asks the server for its routing table and then connects to the Bolt
address the server advertises, so this is the path a cluster or Aura takes (docs/scaling.md).
Both serving-read settings must run; on a single server both reach the same member.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Literal

import pytest
from pydantic import SecretStr

from memorepair.api import MemoryStore, open_store
from memorepair.errors import InputError
from memorepair.local.server import LocalServer
from memorepair.settings import Settings

Mode = Literal["writer", "any"]


def routed(settings: Settings, serving_reads: Mode) -> Settings:
    """The session's local server, reached through a `neo4j://` routing URI."""
    if not settings.uses_local_server:
        pytest.skip("routing is tested against the local server")
    password = LocalServer(settings).password() if settings.local_auth else None
    return settings.model_copy(
        update={
            "neo4j_uri": f"neo4j://127.0.0.1:{settings.bolt_port}",
            "neo4j_password": SecretStr(password) if password else None,
            "serving_reads": serving_reads,
        }
    )


@pytest.fixture
def ns() -> str:
    return f"t{uuid.uuid4().hex[:12]}"


@pytest.fixture(params=["writer", "any"])
def routed_memory(
    request: pytest.FixtureRequest, neo4j_settings: Settings, ns: str
) -> Iterator[MemoryStore]:
    memory = open_store(ns=ns, settings=routed(neo4j_settings, request.param))
    try:
        yield memory
    finally:
        memory.clear()
        memory.close()


def test_a_repair_runs_over_a_routing_uri(routed_memory: MemoryStore) -> None:
    memory = routed_memory
    assert memory.store.uri.startswith("neo4j://")
    memory.record({"uid": "pref-1", "kind": "record", "content": "Ana prefers CHF."})
    memory.record(
        {"uid": "sum-1", "kind": "summary", "content": "- Ana prefers CHF.", "inputs": ["pref-1"]}
    )
    assert [a.uid for a in memory.retrieve(uid="sum-1")] == ["sum-1"]
    before = memory.bookmarks()
    report = memory.forget("pref-1")
    assert report.outcomes["removed"] == ["sum-1"]
    # Serving reads after the repair are chained to its commits, on either setting.
    assert memory.retrieve(uid="sum-1") == []
    assert memory.served(["pref-1", "sum-1"]) == {}
    assert memory.bookmarks() and memory.bookmarks() != before


def test_a_reader_elsewhere_follows_the_writers_bookmarks(
    neo4j_settings: Settings, ns: str
) -> None:
    writer = open_store(ns=ns, settings=routed(neo4j_settings, "writer"))
    reader = open_store(ns=ns, settings=routed(neo4j_settings, "any"))
    try:
        writer.record({"uid": "note", "kind": "record", "content": "first"})
        published = writer.bookmarks()
        assert published and all(isinstance(b, str) for b in published)
        reader.await_bookmarks(published)  # what a process on a read replica does
        assert [a.content for a in reader.retrieve(uid="note")] == ["first"]
        assert set(published) <= set(reader.bookmarks())
        with pytest.raises(InputError, match="list of strings"):
            reader.await_bookmarks(published[0])  # type: ignore[arg-type]
    finally:
        writer.clear()
        reader.close()
        writer.close()
