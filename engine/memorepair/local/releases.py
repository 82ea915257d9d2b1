"""The Neo4j lines the local launcher runs, and what differs between them.

Neo4j ships two lines from Maven Central: 5.26 LTS (Java 17 or 21, entry point
`org.neo4j.server.CommunityEntryPoint`) and the calendar-versioned line that Aura runs
(2026.x: Java 25, entry point `org.neo4j.server.Neo4jCommunity`). Everything the launcher
must choose by version lives here, as data, so `server.py` holds no version checks
and a new line is one more entry. Which Java binary fits is decided here too: the JVM is
the first thing a wrong line breaks, and its error ("UnsupportedClassVersionError") says
nothing about Neo4j.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from memorepair.errors import ConfigError, ServerError

#: Where Debian and the Temurin packages install JDKs (searched when no Java is named).
JVM_DIR = Path("/usr/lib/jvm")


@dataclass(frozen=True)
class Release:
    """One Neo4j line: how to start it and which Java runs it."""

    line: str
    entry_point: str
    java_min: int
    java_max: int | None
    #: Settings added to neo4j.conf for this line only (features a local single server
    #: does not need and that would otherwise start by default).
    conf: tuple[str, ...] = ()

    @property
    def java_range(self) -> str:
        return f"Java {self.java_min}" + (f"-{self.java_max}" if self.java_max else "+")


LTS_5 = Release(
    line="5.26 LTS",
    entry_point="org.neo4j.server.CommunityEntryPoint",
    java_min=17,
    java_max=21,
)
CALENDAR_2026 = Release(
    line="2026.x",
    entry_point="org.neo4j.server.Neo4jCommunity",
    java_min=25,
    java_max=None,
    # Fleet Manager reports to Neo4j Aura's console; a local server has no Aura to join.
    conf=("dbms.fleet_manager.enabled=false",),
)
#: Every entry point the launcher may have started (`status` recognises its own process).
ENTRY_POINTS = (LTS_5.entry_point, CALENDAR_2026.entry_point)

_VERSION = re.compile(r"^(\d+)\.(\d+)\.(\d+)$")


def parse_version(version: str) -> tuple[int, int, int]:
    """`5.26.30` -> (5, 26, 30); calendar versions compare correctly as tuples too."""
    found = _VERSION.match(version)
    if found is None:
        raise ConfigError(f"MEMOREPAIR_NEO4J_VERSION must look like 5.26.30, got {version!r}")
    major, minor, patch = (int(part) for part in found.groups())
    return major, minor, patch


def release_for(version: str) -> Release:
    """The line `version` belongs to; an untested line is refused by name."""
    major, minor, _ = parse_version(version)
    if major == 5 and minor == 26:
        return LTS_5
    if major == 2026:
        return CALENDAR_2026
    raise ConfigError(
        f"Neo4j {version} is not a line the launcher runs; set MEMOREPAIR_NEO4J_VERSION to "
        "5.26.x (LTS, the default) or 2026.x (e.g. 2026.08.1), or point NEO4J_URI at a "
        "server you run yourself"
    )


def check_downgrade(store_version: str | None, wanted: str) -> None:
    """Refuse to open a store written by a newer Neo4j with an older one.

    Neo4j upgrades a store's format and transaction logs on first start and never
    downgrades them; an older server would fail deep in recovery, or worse, start on
    logs it only half understands.
    """
    if store_version is None or parse_version(store_version) <= parse_version(wanted):
        return
    raise ServerError(
        f"the store in this state folder was last opened by Neo4j {store_version}; Neo4j "
        f"{wanted} cannot open a store written by a newer version. Set "
        f"MEMOREPAIR_NEO4J_VERSION={store_version}, or use another MEMOREPAIR_STATE_DIR "
        "(export with `memorepair export` and import there to move the memory)"
    )


def java_major(java: Path) -> int | None:
    """The major version of the JDK/JRE `java` belongs to (its `release` file, else
    `java -version`); None when it cannot be told."""
    release = java.resolve().parent.parent / "release"
    try:
        text = release.read_text(encoding="utf-8")
    except OSError:
        text = _version_output(java)
    found = re.search(r'(?:JAVA_VERSION=|version )"(\d+)(?:\.(\d+))?', text)
    if found is None:
        return None
    first = int(found.group(1))
    return int(found.group(2) or 0) if first == 1 else first  # "1.8.0" is Java 8


def _version_output(java: Path) -> str:
    try:
        result = subprocess.run(
            [str(java), "-version"], capture_output=True, text=True, timeout=30, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return result.stderr + result.stdout


def fits(release: Release, major: int | None) -> bool:
    return (
        major is not None
        and major >= release.java_min
        and (release.java_max is None or major <= release.java_max)
    )


def choose_java(release: Release, configured: Path | None) -> Path:
    """The Java that runs `release`: MEMOREPAIR_JAVA_HOME if set (and checked), else the
    first that fits among JAVA_HOME, `java` on PATH and the JDKs under /usr/lib/jvm."""
    if configured is not None:
        java = configured / "bin" / "java"
        major = java_major(java) if java.exists() else None
        if not fits(release, major):
            raise ServerError(
                f"MEMOREPAIR_JAVA_HOME={configured} is "
                f"{'not a Java installation' if major is None else f'Java {major}'}; Neo4j "
                f"{release.line} needs {release.java_range}"
            )
        return java
    for java in _candidates():
        if fits(release, java_major(java)):
            return java
    raise ServerError(
        f"no {release.java_range} found for Neo4j {release.line} (looked at JAVA_HOME, PATH "
        f"and {JVM_DIR}); install one (Debian: apt-get install openjdk-17-jre-headless for "
        "5.26; Temurin 25 for 2026.x) or set MEMOREPAIR_JAVA_HOME"
    )


def _candidates() -> Iterable[Path]:
    if os.environ.get("JAVA_HOME"):
        yield Path(os.environ["JAVA_HOME"]) / "bin" / "java"
    on_path = shutil.which("java")
    if on_path:
        yield Path(on_path)
    if JVM_DIR.is_dir():
        for home in sorted(JVM_DIR.iterdir()):
            if (home / "bin" / "java").exists() and not home.is_symlink():
                yield home / "bin" / "java"
