"""The local server's trust boundary on the real server: private files whatever the
umask, a password that never reaches a command line, and a folder's `.env` that can
neither redirect the store nor choose the Java binary.
"""

from __future__ import annotations

import os
import socket
import stat
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import SecretStr
from reliability_support import MEMORYREPAIR_BIN
from tests.servers import free_port, private_settings, private_state

from memorepair.api import connect
from memorepair.local.server import LocalServer
from memorepair.settings import Settings


@pytest.fixture
def umask_022() -> Iterator[None]:
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


def shared_paths(root: Path) -> list[str]:
    """Paths under root (and root itself) that a group or other user may use."""
    found = []
    for folder, dirs, files in os.walk(root):
        for path in [folder, *(os.path.join(folder, n) for n in dirs + files)]:
            info = os.lstat(path)
            if not stat.S_ISLNK(info.st_mode) and info.st_mode & 0o077:
                found.append(f"{stat.S_IMODE(info.st_mode):o} {path}")
    return found


class CommandLineWatch:
    """Reads every process's command line over and over while a block runs."""

    def __init__(self, needle: bytes, marker: bytes) -> None:
        self.needle, self.marker = needle, marker
        self.leaked: list[str] = []
        self.saw_marker = False
        self.scans = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            for entry in os.scandir("/proc"):
                if not entry.name.isdigit():
                    continue
                try:
                    cmdline = Path(entry.path, "cmdline").read_bytes()
                except OSError:
                    continue
                if self.needle in cmdline:
                    self.leaked.append(cmdline.decode(errors="replace"))
                if self.marker in cmdline:
                    self.saw_marker = True
            self.scans += 1

    def __enter__(self) -> CommandLineWatch:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()


def test_state_folder_is_private_under_umask_022(
    tmp_path: Path, neo4j_settings: Settings, umask_022: None
) -> None:
    password = "-Tricky \"pass\" #word\\ é '1'"
    settings = private_settings(tmp_path, neo4j_settings, neo4j_password=SecretStr(password))
    state = settings.state_dir
    state.chmod(0o755)
    (state / "neo4j").chmod(0o755)
    stale = state / "neo4j" / "home" / "logs"
    stale.mkdir(parents=True, mode=0o755)
    (stale / "old.log").write_text("from before\n", encoding="utf-8")
    (stale / "old.log").chmod(0o644)
    assert shared_paths(state)
    server = LocalServer(settings)
    messages: list[str] = []
    with CommandLineWatch(password.encode(), b"set-initial-password.args") as watch:
        server.start(progress=messages.append)
    try:
        # the admin tool ran while we watched, and its argument list never held the password
        assert watch.saw_marker and watch.scans > 1
        assert watch.leaked == []
        assert not (server.root / "set-initial-password.args").exists()
        with connect(settings) as store:  # the tricky password really was set
            store.driver.execute_query("CREATE (:Probe {at: 1})")  # the server writes files
        assert any("owner-only" in m for m in messages), messages
        assert stat.S_IMODE(state.stat().st_mode) == 0o700
        assert stat.S_IMODE((state / "neo4j").stat().st_mode) == 0o700
        store_files = list((server.home / "data").rglob("*"))
        assert (
            any(p.is_file() for p in store_files) and (server.home / "data/dbms/auth.ini").is_file()
        )
        assert shared_paths(state) == []
    finally:
        server.stop()
    assert shared_paths(state) == []


def test_a_folders_env_cannot_redirect_the_store_or_pick_java(
    tmp_path: Path, neo4j_settings: Settings
) -> None:
    if not neo4j_settings.uses_local_server:
        pytest.skip("needs the local server")
    folder = tmp_path / "untrusted"
    folder.mkdir()
    marker = tmp_path / "evil-java-ran"
    fake_java = folder / "jdk" / "bin" / "java"
    fake_java.parent.mkdir(parents=True)
    fake_java.write_text(f"#!/bin/sh\ntouch {marker}\nexit 1\n", encoding="utf-8")
    fake_java.chmod(0o755)
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    listener.settimeout(0.5)
    (folder / ".env").write_text(
        f"NEO4J_URI=bolt://127.0.0.1:{listener.getsockname()[1]}\n"
        "NEO4J_PASSWORD=folder-chosen\n"
        f"MEMOREPAIR_JAVA_HOME={folder / 'jdk'}\n"
        f"MEMOREPAIR_STATE_DIR={folder / 'evil-state'}\n",
        encoding="utf-8",
    )
    base = {k: v for k, v in os.environ.items() if not k.startswith(("NEO4J_", "MEMOREPAIR_"))}

    def run(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(MEMORYREPAIR_BIN), *args],
            cwd=folder,
            env={**base, **env},
            capture_output=True,
            text=True,
            timeout=180,
            check=False,
        )

    session = {
        "MEMOREPAIR_STATE_DIR": str(neo4j_settings.state_dir.resolve()),
        "MEMOREPAIR_BOLT_PORT": str(neo4j_settings.bolt_port),
    }
    try:
        served = run("status", "--json", **session)
        assert served.returncode == 0, served.stderr
        with pytest.raises(TimeoutError):
            listener.accept()  # nothing connected to the folder's server
        private = {
            "MEMOREPAIR_STATE_DIR": str(private_state(tmp_path, neo4j_settings)),
            "MEMOREPAIR_BOLT_PORT": str(free_port()),
            "MEMOREPAIR_HEAP": "512m",
            "MEMOREPAIR_PAGECACHE": "64m",
        }
        started = run("neo4j", "start", **private)
        assert started.returncode == 0, started.stderr
        assert run("neo4j", "stop", **private).returncode == 0
        assert not marker.exists()
        assert not (folder / "evil-state").exists()
        # the control: named explicitly, the same file does choose the Java binary
        named = run("--env-file", ".env", "neo4j", "start", **private)
        assert named.returncode != 0 and marker.exists()
    finally:
        listener.close()
