"""Test tiers: `tests/unit` needs no database; `tests/integration` runs against a real Neo4j;
`tests/bench` tests the benchmarks, those of its tests that use the database among the
integration tier.

Unit tests run first (collection puts them before the integration tier), so a quick
failure shows before the server is even started. `make test` runs the tiers as two passes:
the unit tier on every core (pytest-xdist), then the integration tier in one process (its
crash tests stop and restart the server the others use).

The integration tier uses the server named by NEO4J_URI when it is set (the official
driver's convention), else a local Community server of its own: its own state folder
(`MEMOREPAIR_TEST_STATE_DIR`, default `.memorepair-test` in the checkout) and its own
Bolt and HTTP ports (`MEMOREPAIR_TEST_BOLT_PORT` / `_HTTP_PORT`, default free ports,
or the ports it already runs on). So `make test` never stops, restarts or writes into a
server the user runs (the demo's, an MCP host's): the crash tests stop and restart the
tests' own. The session starts it once and stops it at the end unless
MEMOREPAIR_KEEP_SERVER is set (the next session then finds it running). Every process
the tests start (the CLI, MCP servers) inherits these settings through the environment.
Each test works in a namespace of its own, cleared afterwards.
"""

from __future__ import annotations

import os
import socket
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from memorepair.api import MemoryStore, open_store
from memorepair.local.server import LocalServer, conf_port
from memorepair.settings import Settings, load_settings

ROOT = Path(__file__).resolve().parents[1]
#: The tests' own state folder (never the user's), unless named.
TEST_STATE = Path(os.environ.get("MEMOREPAIR_TEST_STATE_DIR") or ROOT / ".memorepair-test")

#: The integration tests repair the sample memory through the API and the CLI (in child
#: processes, which inherit this), so its `currency` tool is registered in every store
#: they open; `test_repair.py` checks that a store without the setting does not have it.
os.environ.setdefault("MEMOREPAIR_SAMPLE_TOOLS", "true")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _use_test_server() -> None:
    """Point this process and its children at the tests' own local server."""
    if os.environ.get("NEO4J_URI"):
        return
    state = TEST_STATE.absolute()
    home = LocalServer(load_settings(state_dir=state)).home
    running = LocalServer(load_settings(state_dir=state)).status().running
    for connector, variable in (("bolt", "BOLT_PORT"), ("http", "HTTP_PORT")):
        chosen = os.environ.get(f"MEMOREPAIR_TEST_{variable}")
        if not chosen and running:
            found = conf_port(home, connector)
            chosen = str(found) if found else None
        os.environ[f"MEMOREPAIR_{variable}"] = chosen or str(_free_port())
    os.environ["MEMOREPAIR_STATE_DIR"] = str(state)


_use_test_server()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark the integration tier, and run the unit tier first (as the README says)."""
    for item in items:
        uses_server = "neo4j_settings" in getattr(item, "fixturenames", ())
        if uses_server or "integration" in Path(str(item.fspath)).parts:
            item.add_marker(pytest.mark.integration)
    items.sort(key=lambda item: item.get_closest_marker("integration") is not None)


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
