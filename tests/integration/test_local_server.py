"""The launcher: a second, private local server starts, answers Bolt, and stops cleanly."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import SecretStr
from tests.servers import private_settings

from memorepair.api import connect
from memorepair.errors import ConfigError, ServerError
from memorepair.local.server import LocalServer
from memorepair.settings import Settings, default_state_dir


@pytest.fixture
def private(tmp_path: Path, neo4j_settings: Settings) -> Settings:
    return private_settings(tmp_path, neo4j_settings)


def test_start_query_stop_leaves_nothing_behind(private: Settings) -> None:
    server = LocalServer(private)
    status = server.start()
    try:
        assert status.running and status.pid
        mode = stat.S_IMODE(os.stat(server.password_file).st_mode)
        assert mode == 0o600
        with connect(private) as store:
            assert store.verify().startswith(f"Neo4j/{private.neo4j_version}")
            rows = store.driver.execute_query("RETURN 1 AS one").records
            assert rows[0]["one"] == 1
        wrong = private.model_copy(
            update={"neo4j_uri": private.local_uri, "neo4j_password": SecretStr("not-the-password")}
        )
        with pytest.raises(ConfigError, match="refused the credentials"):
            connect(wrong)
        with pytest.raises(ServerError, match="already taken"):
            LocalServer(
                private.model_copy(update={"state_dir": private.state_dir / "other"})
            ).start()
        password = server.password()
        logs = "".join(p.read_text(errors="replace") for p in (server.home / "logs").glob("*.log"))
        assert password not in logs
    finally:
        assert server.stop()
    assert not server.status().running
    assert not Path(f"/proc/{status.pid}").exists()
    assert not server.stop()  # stopping twice is harmless


def test_a_password_starting_with_a_dash_is_set_not_read_as_an_option(private: Settings) -> None:
    # Generated passwords are token_urlsafe: one in 64 starts with '-', which the admin
    # tool read as an unknown option (it printed its usage and start failed).
    server = LocalServer(private)
    server.password_file.parent.mkdir(parents=True, exist_ok=True)
    server.password_file.write_text("-Xdash-first-password-0123\n", encoding="utf-8")
    server.start()
    try:
        with connect(private) as store:
            assert store.driver.execute_query("RETURN 1 AS one").records[0]["one"] == 1
    finally:
        assert server.stop()


ROOT = Path(__file__).resolve().parents[2]
MEMOREPAIR = Path(sys.executable).parent / "memorepair"


def test_the_suite_runs_on_a_server_of_its_own(neo4j_settings: Settings) -> None:
    """`make test` never stops, restarts or writes into the user's server: the session's
    server has the tests' own state folder (and ports), and every child process the tests
    start is pointed at it."""
    if not neo4j_settings.uses_local_server:
        pytest.skip("NEO4J_URI names the server the tests use")
    named = os.environ.get("MEMOREPAIR_TEST_STATE_DIR")
    expected = Path(named or ROOT / ".memorepair-test").absolute()
    assert neo4j_settings.state_dir == expected
    assert os.environ["MEMOREPAIR_STATE_DIR"] == str(expected)
    assert os.environ["MEMOREPAIR_BOLT_PORT"] == str(neo4j_settings.bolt_port)
    if not named:  # by default neither the checkout's server (make) nor the per-user one
        assert expected not in (ROOT / ".memorepair", default_state_dir())


def test_status_names_the_server_of_another_state_folder_on_its_port(
    neo4j_settings: Settings, tmp_path: Path
) -> None:
    """From a folder whose state folder has no server, while the port answers for the
    server of another state folder: not "stopped" alone, but which one and how to reach it."""
    if not neo4j_settings.uses_local_server:
        pytest.skip("needs the local server")
    elsewhere = tmp_path / "other-state"
    env = {
        **os.environ,
        "MEMOREPAIR_STATE_DIR": str(elsewhere),
        "MEMOREPAIR_BOLT_PORT": str(neo4j_settings.bolt_port),
    }

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(MEMOREPAIR), *args], cwd=tmp_path, env=env, capture_output=True, text=True
        )

    running = neo4j_settings.state_dir.resolve()
    status = run("neo4j", "status")
    assert status.returncode == 3, status.stdout + status.stderr
    assert f"served by the local Neo4j of another state folder, {running}" in status.stdout
    assert f"export MEMOREPAIR_STATE_DIR={running}" in status.stdout
    as_json = json.loads(run("neo4j", "status", "--json").stdout)
    assert as_json["running"] is False and as_json["port_holder"]["state_dir"] == str(running)
    connect = run("status")
    assert connect.returncode == 1 and f"export MEMOREPAIR_STATE_DIR={running}" in connect.stderr
    assert not elsewhere.exists()  # nothing written, no guessed password
