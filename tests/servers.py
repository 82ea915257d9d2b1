"""What the tests that start a Neo4j server of their own share: a free port, and a state
folder that reuses the session server's jars, so no test fetches them from Maven again."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

from memorepair.settings import Settings, load_settings


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listened on a moment ago."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def private_state(tmp_path: Path, session: Settings) -> Path:
    """A fresh state folder under `tmp_path` whose server version links the `session`
    server's jars (when it has fetched them)."""
    jars = session.state_dir.resolve() / "neo4j" / session.neo4j_version / "lib"
    version_dir = tmp_path / "state" / "neo4j" / session.neo4j_version
    version_dir.mkdir(parents=True)
    if jars.is_dir():
        (version_dir / "lib").symlink_to(jars)
    return tmp_path / "state"


def private_settings(tmp_path: Path, session: Settings, **overrides: Any) -> Settings:
    """Settings for a small server of the test's own (512m heap, a free bolt port, its
    own password) in `private_state`; `overrides` as `load_settings` takes them."""
    chosen: dict[str, Any] = {
        "bolt_port": free_port(),
        "heap": "512m",
        "pagecache": "64m",
        "neo4j_uri": None,
        "neo4j_password": None,
    }
    return load_settings(state_dir=private_state(tmp_path, session), **(chosen | overrides))
