"""Test tiers: `tests/unit` needs no database; `tests/integration` runs against a real Neo4j;
`tests/bench` tests the benchmarks, those of its tests that use the database among the
integration tier.

Unit tests run first (collection puts them before the integration tier), so a quick
failure shows before the server is even started. `make test` runs three passes: the unit
tier on every core (pytest-xdist), the integration tier on two workers sharing one server,
then, alone, the tests marked `serial`: those that change what every namespace shares (they
stop the server, drop its constraints or indexes). Under xdist a `serial` test fails
before its body runs.

The integration tier uses the server named by NEO4J_URI when it is set (the official
driver's convention), else a local Community server of its own: its own state folder
(`MEMOREPAIR_TEST_STATE_DIR`, default `.memorepair-test` in the checkout) and its own
Bolt and HTTP ports (`MEMOREPAIR_TEST_BOLT_PORT` / `_HTTP_PORT`, default free ports,
or the ports it already runs on). So `make test` never stops, restarts or writes into a
server the user runs (the demo's, an MCP host's): the crash tests stop and restart the
tests' own. The first test that needs it starts it (under a file lock, so two workers start
it once) and the run that started it stops it at the end, unless MEMOREPAIR_KEEP_SERVER is
set (the next session then finds it running and leaves it). A run is one pytest
invocation, or several sharing `MEMOREPAIR_TEST_RUN` (as `make test`'s passes do: the last
one stops the server). Every process the tests start (workers, the CLI, MCP servers)
inherits these settings through the environment. Each test works in a namespace of its
own, cleared afterwards.
"""

from __future__ import annotations

import fcntl
import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.servers import free_port

from memorepair.api import MemoryStore, open_store
from memorepair.local.server import LocalServer, conf_port
from memorepair.settings import Settings, load_settings

ROOT = Path(__file__).resolve().parents[1]
#: The tests' own state folder (never the user's), unless named.
TEST_STATE = Path(os.environ.get("MEMOREPAIR_TEST_STATE_DIR") or ROOT / ".memorepair-test")
#: Names the run that started the tests' server (in `TEST_STATE`/tests-started-by), so the
#: controller of that run, and no other, stops it.
RUN_ENV = "MEMOREPAIR_TEST_RUN"

#: The integration tests repair the sample memory through the API and the CLI (in child
#: processes, which inherit this), so its `currency` tool is registered in every store
#: they open; `test_repair.py` checks that a store without the setting does not have it.
os.environ.setdefault("MEMOREPAIR_SAMPLE_TOOLS", "true")


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
        chosen = chosen or str(free_port())
        os.environ[f"MEMOREPAIR_{variable}"] = chosen
        # xdist workers start after this and import it again: they take the same ports
        os.environ[f"MEMOREPAIR_TEST_{variable}"] = chosen
    os.environ["MEMOREPAIR_STATE_DIR"] = str(state)


_use_test_server()


def _is_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


def pytest_configure(config: pytest.Config) -> None:
    if not _is_worker(config):  # workers inherit it: one run, one owner
        os.environ.setdefault(RUN_ENV, uuid.uuid4().hex)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark the integration tier, and run the unit tier first (as the README says)."""
    for item in items:
        uses_server = "neo4j_settings" in getattr(item, "fixturenames", ())
        if uses_server or "integration" in Path(str(item.fspath)).parts:
            item.add_marker(pytest.mark.integration)
    items.sort(key=lambda item: item.get_closest_marker("integration") is not None)


def pytest_runtest_setup(item: pytest.Item) -> None:
    """Refuse to run a `serial` test on an xdist worker: the other worker shares its server."""
    if item.get_closest_marker("serial") and _is_worker(item.config):
        pytest.fail(
            "marked serial: it changes the server every worker shares; run it without -n, "
            'as `make test` does (and -m "not serial" under -n)',
            pytrace=False,
        )


def _owner_file() -> Path:
    return TEST_STATE.absolute() / "tests-started-by"


def _prepare_once(settings: Settings) -> None:
    """Start the tests' server unless it runs, and apply the schema: under a file lock, so
    workers do it one at a time (the first starts the server, none races another's DDL)."""
    lock_file = _owner_file().with_name("tests-start.lock")
    lock_file.parent.mkdir(parents=True, exist_ok=True)
    with open(lock_file, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        server = LocalServer(settings)
        if settings.uses_local_server and not server.status().running:
            server.start()
            _owner_file().write_text(os.environ[RUN_ENV], encoding="utf-8")
        with open_store(ns="schema", settings=settings) as memory:
            memory.apply_schema()


def pytest_sessionfinish(session: pytest.Session) -> None:
    """The run that started the tests' server stops it (its controller, after every worker)."""
    if _is_worker(session.config) or os.environ.get("MEMOREPAIR_KEEP_SERVER"):
        return
    owner = _owner_file()
    if owner.is_file() and owner.read_text(encoding="utf-8") == os.environ[RUN_ENV]:
        LocalServer(load_settings()).stop()
        owner.unlink()


@pytest.fixture(scope="session")
def neo4j_settings() -> Settings:
    settings = load_settings()
    _prepare_once(settings)
    return settings


@pytest.fixture
def memory(neo4j_settings: Settings) -> Iterator[MemoryStore]:
    ns = f"t{uuid.uuid4().hex[:12]}"
    store = open_store(ns=ns, settings=neo4j_settings)
    try:
        yield store
    finally:
        store.clear()
        store.close()
