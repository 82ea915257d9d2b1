"""The local Neo4j Community server: jars from Maven Central, started from the classpath.

There is no Docker engine on the machines this project targets and Neo4j is packaged in
neither Debian nor PyPI, but Maven Central serves the Community jars and Java 17 runs the
5.26 LTS line (Java 25 the 2026.x line; `releases.py` holds what differs). So
`start` resolves the jars once into the state folder with Maven, writes a `neo4j.conf`
(Bolt on 127.0.0.1 only, HTTP off, usage reporting off, no transaction-log preallocation,
heap and page cache sized from the store by `sizing.py`), sets the initial
password before the first start, and runs the line's stock entry point in its own
session. It returns once Bolt answers a protocol handshake, so the caller can connect at
once.

The password comes from `NEO4J_PASSWORD`, else is generated into
`<state>/neo4j/password` with mode 0600. It is never printed, and it reaches the admin
tool through a Java argument file (0600, deleted at once), never a command line that
other users can read in the process list.

Everything the launcher and the server write is owner-only whatever the umask: the state
folder and `<state>/neo4j/` are 0700, files are written 0600, Maven, the admin tool and
the server run with umask 077, and `start` takes group and other permissions off any
existing file under `<state>/neo4j/` (saying how many it fixed).
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import shutil
import signal
import socket
import stat
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

from memorepair.errors import ConfigError, ServerError
from memorepair.local.releases import ENTRY_POINTS, check_downgrade, choose_java, release_for
from memorepair.local.sizing import Sizing, size_server
from memorepair.settings import Settings

#: Whatever the launcher, Maven, the admin tool and the server create: owner-only.
PRIVATE_UMASK = 0o077
ADMIN_TOOL = "org.neo4j.cli.AdminTool"

#: Neo4j's own launcher passes these on Java 17+; without them the kernel fails at start.
JVM_FLAGS = [
    "-XX:+UseG1GC",
    "-XX:-OmitStackTraceInFastThrow",
    "-XX:+UnlockExperimentalVMOptions",
    "-XX:+TrustFinalNonStaticFields",
    "-XX:+DisableExplicitGC",
    "-Djdk.nio.maxCachedBufferSize=1024",
    "-Dio.netty.tryReflectionSetAccessible=true",
    "-Djdk.tls.ephemeralDHKeySize=2048",
    "-Djdk.tls.rejectClientInitiatedRenegotiation=true",
    "--add-opens=java.base/java.nio=ALL-UNNAMED",
    "--add-opens=java.base/java.io=ALL-UNNAMED",
    "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
    "--add-opens=java.base/java.lang=ALL-UNNAMED",
    "--add-opens=java.base/java.util=ALL-UNNAMED",
    "--add-opens=java.base/java.util.concurrent=ALL-UNNAMED",
    "--add-opens=java.base/java.lang.invoke=ALL-UNNAMED",
    "--add-opens=java.base/java.lang.reflect=ALL-UNNAMED",
    "--add-opens=java.base/java.net=ALL-UNNAMED",
    "--add-opens=java.base/jdk.internal.misc=ALL-UNNAMED",
    "--add-opens=java.base/sun.nio.fs=ALL-UNNAMED",
    "--add-exports=java.base/sun.nio.ch=ALL-UNNAMED",
    "--add-exports=java.base/jdk.internal.misc=ALL-UNNAMED",
    "--enable-native-access=ALL-UNNAMED",
]

#: Transaction-log file size: small, so that erased bytes leave the logs soon (a file is
#: deleted only once rotated out and passed by a checkpoint) and `neo4j purge` needs
#: little filler to rotate (docs/erasure.md).
TX_LOG_ROTATION_BYTES = 1 << 20

_BOLT_MAGIC = bytes.fromhex("6060B017")
#: Offer Bolt 5.x and 4.4; any non-zero answer means the connector is up.
_BOLT_VERSIONS = bytes.fromhex("00080805000004040000000000000000")


@dataclass(frozen=True)
class PortHolder:
    """What answers on a port this state folder's server is not running on: the local
    server of another state folder (`state_dir`), or another process (None)."""

    port: int
    pid: int | None = None
    state_dir: Path | None = None

    @property
    def holder(self) -> str:
        if self.state_dir is None:
            return "another process (not a MemoRepair server)"
        return f"the local Neo4j of another state folder, {self.state_dir} (pid {self.pid})"

    def describe(self) -> str:
        hint = f"; to use it: export MEMOREPAIR_STATE_DIR={self.state_dir}"
        return f"port {self.port} is served by {self.holder}" + (hint if self.state_dir else "")

    def as_dict(self) -> dict[str, object]:
        state = str(self.state_dir) if self.state_dir else None
        return {"port": self.port, "pid": self.pid, "state_dir": state}


@dataclass(frozen=True)
class ServerStatus:
    running: bool
    pid: int | None
    uri: str
    version: str
    home: Path
    auth: bool
    browser: str | None = None  # Neo4j Browser's address, when it is served
    state_dir: Path | None = None
    #: While this one is stopped: what answers on its Bolt port instead, if anything.
    port_holder: PortHolder | None = None

    def as_dict(self) -> dict[str, object]:
        return {
            "running": self.running,
            "pid": self.pid,
            "uri": self.uri,
            "version": self.version,
            "home": str(self.home),
            "state_dir": str(self.state_dir) if self.state_dir else None,
            "auth": self.auth,
            "browser": self.browser,
            "port_holder": self.port_holder.as_dict() if self.port_holder else None,
        }


class LocalServer:
    """One local server per state folder; every path lives under `<state>/neo4j/`."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.root = settings.state_dir.resolve() / "neo4j"
        self.lib = self.root / settings.neo4j_version / "lib"
        self.home = self.root / "home"
        self.conf_dir = self.home / "conf"
        self.pid_file = self.root / "server.pid"
        self.password_file = self.root / "password"
        self.console_log = self.home / "logs" / "console.log"
        self.browser_lib = self.root / "browser" / "lib"
        self.release = release_for(settings.neo4j_version)
        #: Which Neo4j last opened the store (Neo4j upgrades a store and never downgrades).
        self.version_file = self.home / "data" / "memorepair-neo4j-version"

    # ---- facts -------------------------------------------------------------------
    def status(self) -> ServerStatus:
        pid = self._live_pid()
        return ServerStatus(
            running=pid is not None,
            pid=pid,
            uri=self.settings.local_uri,
            version=self.settings.neo4j_version,
            home=self.home,
            auth=self.settings.local_auth,
            browser=self.browser_url if pid is not None and self._serves_browser() else None,
            state_dir=self.root.parent,
            port_holder=None if pid is not None else self.port_holder(),
        )

    def port_holder(self, port: int | None = None) -> PortHolder | None:
        """What answers on this folder's Bolt port (or `port`) while its own server does
        not: the local server of another state folder, named, or another process."""
        port = self.settings.bolt_port if port is None else port
        if self._live_pid() is not None or not _port_open(port):
            return None
        for pid, home in running_servers():
            if home != self.home and conf_port(home, "bolt") == port:
                return PortHolder(port, pid, home.parent.parent)
        return PortHolder(port)

    @property
    def browser_url(self) -> str:
        """Neo4j Browser on loopback, with the Bolt address and user filled in."""
        s = self.settings
        return (
            f"http://127.0.0.1:{s.http_port}/browser/"
            f"?dbms=bolt://{s.neo4j_username}@127.0.0.1:{s.bolt_port}"
        )

    def _serves_browser(self) -> bool:
        conf = self.conf_dir / "neo4j.conf"
        return conf.is_file() and "server.http.enabled=true" in conf.read_text(encoding="utf-8")

    def password(self) -> str:
        """The password clients use: the configured one, else the generated one."""
        if self.settings.neo4j_password is not None:
            return self.settings.neo4j_password.get_secret_value()
        if self.password_file.is_file():
            return self.password_file.read_text(encoding="utf-8").strip()
        self._make_private_root()
        generated = secrets.token_urlsafe(24)
        fd = os.open(self.password_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(generated + "\n")
        return generated

    def connection(self) -> tuple[str, tuple[str, str] | None]:
        """The Bolt URI and credentials clients use (the configured password, else the
        generated one). A state folder that never started a server is refused here: its
        generated password lives there, so guessing would only fail later as a bare
        authentication error, and leave a stray state folder behind. When the port answers
        for another state folder's server, the refusal says which and how to reach it."""
        s = self.settings
        if s.local_auth and s.neo4j_password is None and not self.password_file.is_file():
            holder = self.port_holder()
            where = f"; {holder.describe()}" if holder and holder.state_dir else ""
            raise ConfigError(
                f"no local Neo4j state in {self.root.parent} (MEMOREPAIR_STATE_DIR){where}. "
                "Run `memorepair neo4j start`, set MEMOREPAIR_STATE_DIR to the folder where "
                "you started one, or set NEO4J_URI and NEO4J_PASSWORD"
            )
        return s.local_uri, (s.neo4j_username, self.password()) if s.local_auth else None

    # ---- lifecycle ---------------------------------------------------------------
    def start(
        self, progress: Callable[[str], None] = lambda _: None, *, browser: bool = False
    ) -> ServerStatus:
        """Start the server; with `browser`, also Neo4j Browser and the HTTP API, bound
        to 127.0.0.1 (MEMOREPAIR_HTTP_PORT)."""
        self._make_private_root()
        fixed = private_tree(self.root)
        if fixed:
            progress(
                f"made {fixed} path(s) under {self.root} owner-only (other users could read "
                "them: the store files, logs and auth.ini)"
            )
        current = self.status()
        if current.running:
            if browser and current.browser is None:
                raise ServerError(
                    "Neo4j is running without the Browser; restart it with the Browser: "
                    "`memorepair neo4j stop && memorepair neo4j start --browser`"
                )
            progress(f"Neo4j already running (pid {current.pid}) at {current.uri}")
            return current
        self._check_ports(browser)
        check_downgrade(self.store_version(), self.settings.neo4j_version)
        command = self._prepare(progress, browser)
        progress(
            f"starting Neo4j {self.settings.neo4j_version} ({self.release.line}, "
            f"{command[0]}) on {self.settings.local_uri}"
        )
        return self._await_bolt(self._launch(command), progress)

    def sizing(self) -> Sizing:
        """Heap, page cache and stop timeout for this store (`auto` values sized from it)."""
        s = self.settings
        store, _ = self.database_dirs(s.neo4j_database)
        return size_server(store, s.heap, s.pagecache, s.stop_timeout_s)

    def store_version(self) -> str | None:
        """The Neo4j version that last opened this state folder's store (None: never)."""
        try:
            return self.version_file.read_text(encoding="utf-8").strip() or None
        except OSError:
            return None

    def _prepare(self, progress: Callable[[str], None], browser: bool) -> list[str]:
        """Java, jars, neo4j.conf and the initial password; the command that starts it."""
        java = str(choose_java(self.release, self.settings.java_home))
        self.ensure_jars(progress)
        classpath = f"{self.lib}/*"
        if browser:
            classpath += f"{os.pathsep}{self.ensure_browser(progress)}/*"
        sizing = self.sizing()
        progress(f"memory: {sizing.reason}")
        self._write_conf(sizing, browser)
        if self.settings.local_auth:
            self._set_initial_password(java)
        return [
            java,
            f"-Xms{sizing.heap}",
            f"-Xmx{sizing.heap}",
            *JVM_FLAGS,
            "-cp",
            classpath,
            self.release.entry_point,
            f"--home-dir={self.home}",
            f"--config-dir={self.conf_dir}",
            "--console-mode",
        ]

    def _launch(self, command: list[str]) -> subprocess.Popen[bytes]:
        """The server in its own session, its output appended to console.log.

        The version is recorded first: the server may upgrade the store as it starts,
        and a start that fails half way must not leave an older line free to open it.
        """
        write_private(self.version_file, f"{self.settings.neo4j_version}\n")
        self.console_log.parent.mkdir(parents=True, exist_ok=True)
        log_fd = os.open(self.console_log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        with os.fdopen(log_fd, "ab") as log:
            process = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                env={**os.environ, "NEO4J_HOME": str(self.home), "NEO4J_CONF": str(self.conf_dir)},
                start_new_session=True,
                umask=PRIVATE_UMASK,
            )
        write_private(self.pid_file, f"{process.pid}\n")
        return process

    def _await_bolt(
        self, process: subprocess.Popen[bytes], progress: Callable[[str], None]
    ) -> ServerStatus:
        """Wait until Bolt answers a handshake; while crash recovery moves, keep waiting."""
        started = time.monotonic()
        debug_log = self.home / "logs" / "debug.log"
        log_offset = debug_log.stat().st_size if debug_log.exists() else 0
        recovered: int | None = None
        deadline = started + self.settings.start_timeout_s
        while time.monotonic() < deadline:
            if process.poll() is not None:
                self.pid_file.unlink(missing_ok=True)
                raise ServerError(
                    f"Neo4j exited with code {process.returncode} during start; "
                    f"last lines of {self.console_log}:\n{self._log_tail()}"
                )
            if _bolt_answers(self.settings.bolt_port):
                progress(f"Neo4j is up after {time.monotonic() - started:.1f}s (pid {process.pid})")
                return self.status()
            percent = recovery_percent(read_from(debug_log, log_offset))
            if percent is not None and percent != recovered:
                # After an unclean shutdown the server replays its transaction log before
                # Bolt opens; that can take minutes after a large write. Killing it half
                # way would only make the next start replay again, so wait while it moves.
                recovered = percent
                progress(f"recovering the database after an unclean shutdown: {percent}%")
                deadline = max(deadline, time.monotonic() + self.settings.start_timeout_s)
            time.sleep(0.25)
        self.stop()
        raise ServerError(
            f"Neo4j did not answer on port {self.settings.bolt_port} within "
            f"{self.settings.start_timeout_s:.0f}s; see {self.console_log} (raise "
            "MEMOREPAIR_START_TIMEOUT_S for a slow machine)"
        )

    def _check_ports(self, browser: bool) -> None:
        ports = [(self.settings.bolt_port, "BOLT")]
        if browser:
            ports.append((self.settings.http_port, "HTTP"))
        for port, name in ports:
            if _port_open(port):
                holder = self.port_holder(port)
                by = holder.holder if holder else "another process"
                raise ServerError(
                    f"port {port} is already taken by {by}; stop it or set "
                    f"MEMOREPAIR_{name}_PORT to a free port"
                )

    def stop(
        self, timeout_s: float | None = None, progress: Callable[[str], None] = lambda _: None
    ) -> bool:
        """SIGTERM, wait for a clean shutdown, SIGKILL the group after `timeout_s`.

        A clean shutdown writes a checkpoint, which after a large write can take a minute
        or more; a kill instead makes the next start replay the transaction log.
        """
        timeout_s = self.sizing().stop_timeout_s if timeout_s is None else timeout_s
        pid = self._live_pid()
        if pid is None:
            self.pid_file.unlink(missing_ok=True)
            return False
        os.killpg(pid, signal.SIGTERM)
        started = time.monotonic()
        deadline = started + timeout_s
        told = False
        while time.monotonic() < deadline and _alive(pid):
            if not told and time.monotonic() - started > 5:
                progress(f"waiting up to {timeout_s:.0f}s for Neo4j to write its checkpoint")
                told = True
            time.sleep(0.2)
        if _alive(pid):
            progress(
                f"Neo4j did not stop within {timeout_s:.0f}s; killed it (the next start "
                "recovers from the transaction log)"
            )
            os.killpg(pid, signal.SIGKILL)
            while _alive(pid):
                time.sleep(0.1)
        with contextlib.suppress(ChildProcessError):  # reap our own child: not even a zombie
            os.waitpid(pid, 0)
        self.pid_file.unlink(missing_ok=True)
        return True

    # ---- pieces ------------------------------------------------------------------
    def ensure_jars(self, progress: Callable[[str], None] = lambda _: None) -> Path:
        return self._fetch(self.lib, [], progress)

    def ensure_browser(self, progress: Callable[[str], None] = lambda _: None) -> Path:
        """Neo4j Browser's jar (the pom's `browser` profile), fetched once."""
        return self._fetch(
            self.browser_lib, ["-P", "browser", "-DincludeArtifactIds=neo4j-browser"], progress
        )

    def _fetch(self, lib: Path, extra: list[str], progress: Callable[[str], None]) -> Path:
        marker = lib / ".complete"
        if marker.is_file():
            return lib
        mvn = shutil.which("mvn")
        if mvn is None:
            raise ServerError(
                "Maven (mvn) is not on PATH; it fetches the Neo4j jars from Maven Central. "
                "Install it (Debian: apt-get install maven) or set NEO4J_URI to a running server"
            )
        self._make_private_root()
        lib.mkdir(mode=0o700, parents=True, exist_ok=True)
        what = "Neo4j Browser" if extra else f"Neo4j {self.settings.neo4j_version}"
        progress(f"fetching {what} jars from Maven Central")
        with resources.as_file(pom_path()) as pom:
            result = subprocess.run(
                [
                    mvn,
                    "-B",
                    "-q",
                    "-f",
                    str(pom),
                    *extra,
                    "dependency:copy-dependencies",
                    f"-DoutputDirectory={lib}",
                    "-DincludeScope=runtime",
                    f"-Dneo4j.version={self.settings.neo4j_version}",
                ],
                capture_output=True,
                text=True,
                check=False,
                umask=PRIVATE_UMASK,
            )
        if result.returncode != 0:
            raise ServerError(
                f"Maven could not fetch the Neo4j jars (exit {result.returncode}):\n"
                f"{(result.stdout + result.stderr)[-2000:]}"
            )
        write_private(marker, "ok\n")
        return lib

    def _write_conf(self, sizing: Sizing, browser: bool = False) -> None:
        for sub in ("conf", "data", "logs", "run", "import", "plugins"):
            (self.home / sub).mkdir(mode=0o700, parents=True, exist_ok=True)
        s = self.settings
        lines = [
            "# Written by `memorepair neo4j start` on every start; edit settings, not this file.",
            "server.default_listen_address=127.0.0.1",
            f"server.bolt.listen_address=127.0.0.1:{s.bolt_port}",
            # Routing drivers (neo4j://) connect to the address the routing table names.
            f"server.bolt.advertised_address=127.0.0.1:{s.bolt_port}",
            "server.bolt.enabled=true",
            *_http_conf(s, browser),
            "server.https.enabled=false",
            f"server.directories.data={self.home / 'data'}",
            f"server.directories.logs={self.home / 'logs'}",
            f"server.directories.run={self.home / 'run'}",
            f"server.directories.import={self.home / 'import'}",
            f"server.directories.plugins={self.home / 'plugins'}",
            f"server.memory.heap.initial_size={sizing.heap}",
            f"server.memory.heap.max_size={sizing.heap}",
            f"server.memory.pagecache.size={sizing.pagecache}",
            f"dbms.security.auth_enabled={'true' if s.local_auth else 'false'}",
            "dbms.usage_report.enabled=false",
            "db.tx_log.preallocate=false",
            # Keep no log file beyond the last and those recovery needs: an erased text's
            # before-image leaves with its file (docs/erasure.md).
            "db.tx_log.rotation.retention_policy=keep_none",
            f"db.tx_log.rotation.size={TX_LOG_ROTATION_BYTES // 1024}k",
            "db.logs.query.enabled=OFF",
            *self.release.conf,
        ]
        write_private(self.conf_dir / "neo4j.conf", "\n".join(lines) + "\n")

    def database_dirs(self, database: str) -> tuple[Path, Path]:
        """A database's store folder and transaction-log folder (what a purge measures)."""
        data = self.home / "data"
        return data / "databases" / database, data / "transactions" / database

    def _set_initial_password(self, java: str) -> None:
        """Only effective before the first start; afterwards the stored password rules.

        The admin tool reads its arguments only from its command line, which any local
        user sees in the process list. So the command line names a Java argument file
        (`java @file`, expanded by the launcher inside the process) that holds the main
        class and its arguments; the file is 0600 in the 0700 folder and deleted as soon
        as the tool exits. `-XX:-UsePerfData` keeps the expanded command out of hsperfdata.
        """
        if (self.home / "data" / "dbms" / "auth.ini").is_file():
            return
        args = [ADMIN_TOOL, "dbms", "set-initial-password", "--", self.password()]
        argfile = self.root / "set-initial-password.args"
        write_private(argfile, "".join(java_argfile_quote(a) + "\n" for a in args))
        try:
            result = subprocess.run(
                [java, "-XX:-UsePerfData", "-cp", f"{self.lib}/*", f"@{argfile}"],
                capture_output=True,
                text=True,
                env={**os.environ, "NEO4J_HOME": str(self.home), "NEO4J_CONF": str(self.conf_dir)},
                check=False,
                umask=PRIVATE_UMASK,
            )
        finally:
            argfile.unlink(missing_ok=True)
        if result.returncode != 0:
            raise ServerError(f"could not set the initial password: {result.stderr[-500:]}")

    def _make_private_root(self) -> None:
        """The state folder and `<state>/neo4j/`, created (or narrowed to) mode 0700."""
        for folder in (self.root.parent, self.root):
            folder.mkdir(mode=0o700, parents=True, exist_ok=True)
            mode = stat.S_IMODE(folder.lstat().st_mode)
            if mode & 0o077:
                folder.chmod(mode & 0o700)

    def _live_pid(self) -> int | None:
        try:
            pid = int(self.pid_file.read_text(encoding="utf-8").strip())
        except (OSError, ValueError):
            return None
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            return None
        ours = any(e.encode() in cmdline for e in ENTRY_POINTS)
        return pid if ours and _alive(pid) else None

    def _log_tail(self, lines: int = 25) -> str:
        try:
            return "\n".join(self.console_log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"


_RECOVERY = re.compile(r"\[o\.n\.k\.r\.Recovery\].*?(\d+)% completed")
_HOME_ARG = "--home-dir="


def running_servers() -> list[tuple[int, Path]]:
    """(pid, home) of every local server this launcher started, whatever its state folder
    (their command lines name the entry point and `--home-dir=<state>/neo4j/home`)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            args = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if not any(e.encode() in args for e in ENTRY_POINTS):
            continue
        homes = [a.decode(errors="replace") for a in args if a.startswith(_HOME_ARG.encode())]
        if homes and _alive(int(entry.name)):
            found.append((int(entry.name), Path(homes[0][len(_HOME_ARG) :])))
    return sorted(found)


def conf_port(home: Path, connector: str) -> int | None:
    """The port a server's `neo4j.conf` (as `start` wrote it) gives a connector."""
    try:
        text = (home / "conf" / "neo4j.conf").read_text(encoding="utf-8")
    except OSError:
        return None
    found = re.search(rf"^server\.{connector}\.listen_address=[^:\n]*:(\d+)$", text, re.M)
    return int(found[1]) if found else None


def _http_conf(s: Settings, browser: bool) -> list[str]:
    """HTTP stays off unless the Browser is asked for; then it listens on loopback only,
    and advertises the loopback Bolt address the Browser connects to."""
    if not browser:
        return ["server.http.enabled=false"]
    return [
        "server.http.enabled=true",
        f"server.http.listen_address=127.0.0.1:{s.http_port}",
        f"server.http.advertised_address=127.0.0.1:{s.http_port}",
        # The Browser then does not report usage.
        "client.allow_telemetry=false",
    ]


def java_argfile_quote(arg: str) -> str:
    """`arg` as one quoted argument of a Java `@argfile` (the launcher's own escapes)."""
    escaped = arg.replace("\\", "\\\\").replace('"', '\\"')
    for char, code in (("\n", "\\n"), ("\r", "\\r"), ("\t", "\\t"), ("\f", "\\f")):
        escaped = escaped.replace(char, code)
    return f'"{escaped}"'


def write_private(path: Path, text: str) -> None:
    """Write `path` as an owner-only (0600) file whatever the umask, replacing it."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        os.fchmod(handle.fileno(), 0o600)
        handle.write(text)


def private_tree(root: Path) -> int:
    """Take group and other permissions off everything under `root`; how many changed.

    Symbolic links are neither followed nor changed (a test links the shared jars in).
    """
    fixed = 0
    for folder, dirs, files in os.walk(root):
        for path in [folder, *(os.path.join(folder, n) for n in dirs + files)]:
            info = os.lstat(path)
            if stat.S_ISLNK(info.st_mode) or not info.st_mode & 0o077:
                continue
            os.chmod(path, stat.S_IMODE(info.st_mode) & 0o700)
            fixed += 1
    return fixed


def recovery_percent(debug_log_text: str) -> int | None:
    """The last crash-recovery progress figure in debug.log text (None: no recovery)."""
    found = _RECOVERY.findall(debug_log_text)
    return int(found[-1]) if found else None


def read_from(path: Path, offset: int) -> str:
    """What was appended to `path` after `offset` (empty if it does not exist yet)."""
    try:
        with open(path, "rb") as file:
            file.seek(0, os.SEEK_END)
            file.seek(offset if file.tell() >= offset else 0)  # rotated: a new file
            return file.read().decode("utf-8", errors="replace")
    except FileNotFoundError:
        return ""


def pom_path() -> Traversable:
    """The pom shipped in the wheel, else the checkout's `neo4j-local/pom.xml`."""
    packaged = resources.files("memorepair.local") / "pom.xml"
    if packaged.is_file():
        return packaged
    return Path(__file__).resolve().parents[3] / "neo4j-local" / "pom.xml"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a zombie left by our own Popen still answers kill(0)
        state = Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _port_open(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(0.5)
        return sock.connect_ex(("127.0.0.1", port)) == 0


def _bolt_answers(port: int) -> bool:
    """A Bolt handshake, not just an open port: the connector is up once it picks a version."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1.0) as sock:
            sock.sendall(_BOLT_MAGIC + _BOLT_VERSIONS)
            answer = sock.recv(4)
    except OSError:
        return False
    return len(answer) == 4 and answer != b"\x00\x00\x00\x00"
