"""What the launcher chooses by Neo4j version: entry point, Java, extra settings, sizes."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.servers import free_port

from memorepair.errors import ConfigError, ServerError
from memorepair.local import releases
from memorepair.local.server import LocalServer
from memorepair.local.sizing import GIB, MIB, format_size, parse_size, size_server, store_facts
from memorepair.settings import load_settings


def test_each_line_has_its_entry_point_and_java() -> None:
    lts = releases.release_for("5.26.30")
    current = releases.release_for("2026.08.1")
    assert lts.entry_point == "org.neo4j.server.CommunityEntryPoint"
    assert (lts.java_min, lts.java_max) == (17, 21)
    assert current.entry_point == "org.neo4j.server.Neo4jCommunity"
    assert current.java_min == 25 and current.java_max is None
    assert "dbms.fleet_manager.enabled=false" in current.conf
    assert lts.conf == ()


@pytest.mark.parametrize("version", ["4.4.40", "5.20.0", "2025.10.1", "2027.01.0"])
def test_untested_lines_are_refused_by_name(version: str) -> None:
    with pytest.raises(ConfigError, match=r"5\.26\.x .* or 2026\.x"):
        releases.release_for(version)


def test_versions_compare_as_numbers() -> None:
    assert releases.parse_version("2026.08.1") > releases.parse_version("5.26.30")
    assert releases.parse_version("5.26.30") > releases.parse_version("5.26.9")
    with pytest.raises(ConfigError, match="must look like"):
        releases.parse_version("5.26")


def test_a_store_is_never_opened_by_an_older_neo4j() -> None:
    releases.check_downgrade(None, "5.26.30")
    releases.check_downgrade("5.26.30", "2026.08.1")
    releases.check_downgrade("2026.08.1", "2026.08.1")
    with pytest.raises(ServerError, match=r"last opened by Neo4j 2026\.08\.1.*5\.26\.30 cannot"):
        releases.check_downgrade("2026.08.1", "5.26.30")


def fake_jdk(root: Path, name: str, version: str) -> Path:
    home = root / name
    (home / "bin").mkdir(parents=True)
    (home / "bin" / "java").write_text("#!/bin/sh\n")
    (home / "release").write_text(f'JAVA_VERSION="{version}"\n')
    return home


def test_java_is_chosen_by_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake_jdk(tmp_path, "java-17", "17.0.12")
    fake_jdk(tmp_path, "temurin-25", "25.0.3")
    monkeypatch.setattr(releases, "JVM_DIR", tmp_path)
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path / "java-17" / "bin"))
    assert releases.choose_java(releases.LTS_5, None).parts[-3] == "java-17"
    assert releases.choose_java(releases.CALENDAR_2026, None).parts[-3] == "temurin-25"


def test_a_named_java_that_does_not_fit_is_refused(tmp_path: Path) -> None:
    home = fake_jdk(tmp_path, "java-17", "17.0.12")
    with pytest.raises(ServerError, match=r"is Java 17; Neo4j 2026.x needs Java 25\+"):
        releases.choose_java(releases.CALENDAR_2026, home)
    with pytest.raises(ServerError, match="not a Java installation"):
        releases.choose_java(releases.LTS_5, tmp_path / "nowhere")
    assert releases.java_major(home / "bin" / "java") == 17


def test_launcher_picks_the_release_from_settings(tmp_path: Path) -> None:
    server = LocalServer(load_settings(state_dir=tmp_path, neo4j_version="2026.08.1"))
    assert server.release is releases.CALENDAR_2026
    assert server.lib.parts[-2] == "2026.08.1"
    assert server.store_version() is None


def test_auto_sizes_follow_the_store(tmp_path: Path) -> None:
    empty = size_server(tmp_path, "auto", "auto", "auto", memory_bytes=24 * GIB)
    assert (empty.heap, empty.pagecache, empty.stop_timeout_s) == ("2g", "512m", 360.0)
    # A store of a million nodes (15-byte records) and 3 GB of files: 8 GB of heap.
    (tmp_path / "neostore.nodestore.db").write_bytes(b"")
    with open(tmp_path / "neostore.nodestore.db", "r+b") as f:
        f.truncate(1_000_000 * 15)
    with open(tmp_path / "neostore.propertystore.db", "wb") as f:
        f.truncate(3 * GIB)
    assert store_facts(tmp_path)[0] == 1_000_000
    big = size_server(tmp_path, "auto", "auto", "auto", memory_bytes=24 * GIB)
    assert big.heap == "8g" and parse_size(big.pagecache) >= 3 * GIB
    assert big.stop_timeout_s > empty.stop_timeout_s
    assert "1,000,000 nodes" in big.reason and "heap 8g (auto)" in big.reason
    small_machine = size_server(tmp_path, "auto", "auto", "auto", memory_bytes=8 * GIB)
    assert small_machine.heap == "4g" and parse_size(small_machine.pagecache) <= 2 * GIB


def test_explicit_sizes_win(tmp_path: Path) -> None:
    chosen = size_server(tmp_path, "512m", "64M", 30.0, memory_bytes=24 * GIB)
    assert (chosen.heap, chosen.pagecache, chosen.stop_timeout_s) == ("512m", "64m", 30.0)
    assert format_size(1536 * MIB) == "1536m" and format_size(8 * GIB) == "8g"


def test_start_refuses_a_store_from_a_newer_neo4j_before_running_anything(tmp_path: Path) -> None:
    port = free_port()
    server = LocalServer(load_settings(state_dir=tmp_path, bolt_port=port, neo4j_uri=None))
    server.version_file.parent.mkdir(parents=True)
    server.version_file.write_text("2026.08.1\n")
    with pytest.raises(ServerError, match=r"MEMOREPAIR_NEO4J_VERSION=2026\.08\.1"):
        server.start()
    assert not server.pid_file.exists() and not server.lib.exists()
