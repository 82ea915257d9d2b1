"""Test tiers: `tests/unit` needs no database; `tests/integration` runs against a real Neo4j;
`tests/bench` tests the benchmarks, those of its tests that use the database among the
integration tier.

The integration tier uses the server named by NEO4J_URI when it is set (the official
driver's convention), else the project's local Community server, started once per
session (and stopped again only if this session started it). Each test works in a
namespace of its own, cleared afterwards, so tests never see each other's data.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from memorepair.api import MemoryStore, open_store
from memorepair.local.server import LocalServer
from memorepair.settings import Settings, load_settings

#: The integration tests repair the sample memory through the API and the CLI (in child
#: processes, which inherit this), so its `currency` tool is registered in every store
#: they open; `test_repair.py` checks that a store without the setting does not have it.
os.environ.setdefault("MEMOREPAIR_SAMPLE_TOOLS", "true")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        uses_server = "neo4j_settings" in getattr(item, "fixturenames", ())
        if uses_server or "integration" in Path(str(item.fspath)).parts:
            item.add_marker(pytest.mark.integration)


@pytest.fixture(scope="session")
def neo4j_settings() -> Iterator[Settings]:
    settings = load_settings()
    started = False
    if settings.uses_local_server:
        server = LocalServer(settings)
        if not server.status().running:
            server.start()
            started = True
    try:
        with open_store(ns="schema", settings=settings) as memory:
            memory.apply_schema()
        yield settings
    finally:
        if started and not os.environ.get("MEMOREPAIR_KEEP_SERVER"):
            LocalServer(settings).stop()


@pytest.fixture
def memory(neo4j_settings: Settings) -> Iterator[MemoryStore]:
    ns = f"t{uuid.uuid4().hex[:12]}"
    store = open_store(ns=ns, settings=neo4j_settings)
    try:
        yield store
    finally:
        store.clear()
        store.close()
