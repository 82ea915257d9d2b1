"""The launcher: a second, private local server starts, answers Bolt, and stops cleanly."""

from __future__ import annotations

import os
import socket
import stat
from pathlib import Path

import pytest
from pydantic import SecretStr

from memorepair.api import connect
from memorepair.errors import ConfigError, ServerError
from memorepair.local.server import LocalServer
from memorepair.settings import Settings, load_settings


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def private(tmp_path: Path, neo4j_settings: Settings) -> Settings:
    # Reuse the jars the session's server already fetched instead of downloading again.
    jars = neo4j_settings.state_dir.resolve() / "neo4j" / neo4j_settings.neo4j_version / "lib"
    root = tmp_path / "state" / "neo4j" / neo4j_settings.neo4j_version
    root.mkdir(parents=True)
    if jars.is_dir():
        (root / "lib").symlink_to(jars)
    return load_settings(
        state_dir=tmp_path / "state",
        bolt_port=free_port(),
        heap="512m",
        pagecache="64m",
        neo4j_uri=None,
        neo4j_password=None,
    )


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
