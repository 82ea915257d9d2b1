"""A test-only tool back-end that tries to get out of the sandbox.

Stdlib only at import time (the model is imported inside ``schema``), so the sandbox child
that runs one of its calls starts in a fraction of a second even on a loaded machine.
"""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from memorepair.model import Interface


class EscapeBackend:
    """A tool that tries to get out of the sandbox: each function is one attempt.

    Every process it leaves behind runs ``sleep <tag>``, so a test can find it by its
    command line from outside the sandbox's PID namespace.
    """

    name = "escape"

    def schema(self) -> Interface:
        from memorepair.model import FunctionSpec, Interface

        tag = FunctionSpec(params={"tag": "string"}, required=["tag"])
        return Interface(
            tool="escape",
            functions={
                "setsid_grandchild": tag,
                "daemon": tag,
                "fork_bomb": FunctionSpec(
                    params={"tag": "string", "hang": "boolean"}, required=["tag", "hang"]
                ),
                "connect": FunctionSpec(params={"port": "integer"}, required=["port"]),
                "write": FunctionSpec(params={"path": "string"}, required=["path"]),
                "probe": FunctionSpec(params={"leave": "string"}, required=["leave"]),
                "sysv": FunctionSpec(params={"key": "integer"}, required=["key"]),
                "burn": FunctionSpec(params={"cpu_s": "number"}, required=["cpu_s"]),
            },
        )

    def call(self, function: str, args: Mapping[str, Any], state: dict[str, Any]) -> Any:
        return getattr(self, f"_{function}")(**args)

    #: Bumped by every ``probe`` in its own process: a later job sees 0 again when each
    #: job starts from a fresh process.
    probes = 0

    @staticmethod
    def _burn(cpu_s: float) -> float:
        """Spin until this process has used ``cpu_s`` seconds of CPU; return how many."""
        while time.process_time() < cpu_s:
            pass
        return time.process_time()

    @staticmethod
    def _sysv(key: int) -> dict[str, bool]:
        """Find a System V shared memory segment under ``key`` (removing it if found),
        then create one: whether an earlier job's was there."""
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        found = libc.shmget(key, 0, 0)
        if found >= 0:
            libc.shmctl(found, 0, None)  # IPC_RMID: leave nothing behind on the host
        created = libc.shmget(key, 4096, 0o1000 | 0o600)  # IPC_CREAT
        return {"found": found >= 0, "created": created >= 0}

    def _probe(self, leave: str) -> dict[str, Any]:
        """What a job can see of the jobs before it: its pid, its open descriptors, the
        files in its folder (after leaving one named ``leave``) and a class counter."""
        type(self).probes += 1
        with open(leave, "w", encoding="utf-8") as handle:
            handle.write("left by an earlier job\n")
        return {
            "pid": os.getpid(),
            "fds": sorted(int(fd) for fd in os.listdir("/proc/self/fd")),
            "files": sorted(os.listdir(".")),
            "probes": type(self).probes,
        }

    @staticmethod
    def _sleeper(tag: str, *, new_session: bool) -> None:
        """Fork a child (in a session of its own if asked) that becomes ``sleep <tag>``;
        return once it has: the write end of a close-on-exec pipe closes at its exec."""
        ready, done = os.pipe2(os.O_CLOEXEC)
        if os.fork() == 0:
            os.close(ready)
            if new_session:
                os.setsid()
            os.execv("/bin/sleep", ["sleep", tag])
        os.close(done)
        os.read(ready, 1)  # EOF: the child has exec'd
        os.close(ready)

    def _setsid_grandchild(self, tag: str) -> None:
        if os.fork() == 0:  # the child starts a grandchild in a new session, then exits
            self._sleeper(tag, new_session=True)
            os._exit(0)
        os.wait()
        time.sleep(3600)  # and the step itself never ends: the timeout has to act

    def _daemon(self, tag: str) -> str:
        """A double-forked daemon that keeps stdout and stderr open; the call returns once
        the daemon runs ``sleep <tag>``."""
        if os.fork() == 0:
            os.setsid()
            self._sleeper(tag, new_session=False)
            os._exit(0)
        os.wait()
        return "daemon running"

    def _fork_bomb(self, tag: str, hang: bool) -> dict[str, int]:
        forked = refused = 0
        while refused < 5 and forked < 10_000:
            try:
                self._sleeper(tag, new_session=True)
                forked += 1
            except OSError:
                refused += 1
        if hang:
            time.sleep(3600)
        return {"forked": forked, "refused": refused}

    def _connect(self, port: int) -> str:
        with socket.socket() as sock:
            sock.settimeout(2)
            try:
                sock.connect(("127.0.0.1", port))
            except OSError as exc:
                return f"refused: {exc}"
        return "connected"

    def _write(self, path: str) -> str:
        try:
            with open(path, "w", encoding="utf-8") as handle:
                handle.write("written from the sandbox\n")
        except OSError as exc:
            return f"refused: {exc}"
        return "written"
