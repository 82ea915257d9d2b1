"""The real sandbox contains what it starts: a setsid() grandchild, a fork bomb, a daemon
holding the output, a network attempt and a write outside the scratch folder.

Processes left behind run ``sleep <tag>`` with a tag unique to the test, so they are
found by command line from outside the sandbox's PID namespace. A call "returns in time"
when it finishes before an outer deadline of timeout + 1 s (the issue's bound) fires.
"""

from __future__ import annotations

import os
import socket
import threading
import uuid
from pathlib import Path
from typing import Any

import pytest

from memorepair.operators import sandbox
from memorepair.operators.sandbox import import_root, isolation, run_chain, run_job, session

BACKEND = {"module": "escape_backend", "attr": "EscapeBackend"}
needs_namespaces = pytest.mark.skipif(
    not isolation().namespaces, reason="this machine refuses unshare's namespaces"
)


def extra_path() -> list[str]:
    import escape_backend  # noqa: F401 - import_root reads sys.modules

    root = import_root("escape_backend")
    assert root is not None
    return [root]


def new_tag() -> str:
    return f"3600.{uuid.uuid4().int % 10**12:012d}"


def tagged(tag: str) -> list[int]:
    """Running (not zombie) processes whose command line holds ``tag``."""
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            cmdline = Path(entry.path, "cmdline").read_bytes()
            state = Path(entry.path, "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if tag.encode() in cmdline and state != "Z":
            found.append(int(entry.name))
    return found


class Watch:
    """Counts the tagged processes while a call runs (proof the attempt happened)."""

    def __init__(self, tag: str) -> None:
        self.tag, self.most = tag, 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.most = max(self.most, len(tagged(self.tag)))

    def __enter__(self) -> Watch:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()


def within(deadline_s: float, work: Any) -> Any:
    """Run ``work()`` in a thread; fail unless it finished before ``deadline_s`` fired."""
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["result"] = work()
        except Exception as exc:
            box["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(deadline_s)
    assert not thread.is_alive(), f"the sandbox call was still running after {deadline_s}s"
    if "error" in box:
        raise box["error"]
    return box["result"]


def call(function: str, args: dict[str, Any], timeout_s: float = 5.0, **kw: Any) -> Any:
    job = {"kind": "call", "backend": BACKEND, "function": function, "args": args}
    return run_job(job, timeout_s=timeout_s, memory_mb=512, extra_path=extra_path(), **kw)


@needs_namespaces
def test_setsid_grandchild_is_gone_at_the_timeout() -> None:
    tag, timeout = new_tag(), 4.0
    job = {
        "chain": {"tool": "escape", "steps": [{"function": "setsid_grandchild", "args": {}}]},
        "schema": {"setsid_grandchild": {"params": {"tag": "string"}, "required": ["tag"]}},
        "backend": BACKEND,
        "max_steps": 10,
    }
    job["chain"]["steps"][0]["args"] = {"tag": tag}  # type: ignore[index]
    with Watch(tag) as watch:
        verdict = within(
            timeout + 1.0,
            lambda: run_chain(job, timeout_s=timeout, memory_mb=512, extra_path=extra_path()),
        )
    assert watch.most >= 1  # the grandchild did run, in a session of its own
    assert not verdict["ok"] and "timed out" in verdict["reason"]
    assert tagged(tag) == []


@needs_namespaces
@pytest.mark.parametrize("hang", [False, True])
def test_fork_bomb_is_limited_and_gone(hang: bool) -> None:
    tag, timeout = new_tag(), 3.0
    with Watch(tag) as watch:
        verdict = within(
            timeout + 1.0,
            lambda: call("fork_bomb", {"tag": tag, "hang": hang}, timeout, max_processes=32),
        )
    assert watch.most < 32  # never more than the limit, even while it hangs
    if hang:  # its children lived until the timeout, so the watch saw them
        assert watch.most >= 1
        assert not verdict["ok"] and "timed out" in verdict["reason"]
    else:  # every forked child ran `sleep <tag>` before the next fork (see escape_backend)
        assert verdict["ok"], verdict
        assert verdict["result"]["refused"] == 5 and 1 <= verdict["result"]["forked"] < 32
    assert tagged(tag) == []


@needs_namespaces
def test_a_daemon_holding_the_output_does_not_hold_the_caller() -> None:
    tag = new_tag()
    # the call returns only once its daemon runs `sleep <tag>` (see escape_backend)
    verdict = within(6.0, lambda: call("daemon", {"tag": tag}, timeout_s=5.0))
    assert verdict == {"ok": True, "reason": "", "result": "daemon running"}
    assert tagged(tag) == []


@needs_namespaces
def test_no_network_from_the_sandbox() -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        listener.settimeout(0.5)
        verdict = call("connect", {"port": listener.getsockname()[1]})
        assert verdict["ok"] and verdict["result"].startswith("refused"), verdict
        with pytest.raises(TimeoutError):
            listener.accept()


@pytest.mark.skipif(isolation().landlock < 1, reason="the kernel has no Landlock")
def test_writes_only_inside_the_scratch_folder(tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    verdict = call("write", {"path": str(outside)})
    assert verdict["ok"] and verdict["result"].startswith("refused"), verdict
    assert not outside.exists()
    assert call("write", {"path": "inside.txt"})["result"] == "written"  # cwd: scratch
    assert call("write", {"path": "/dev/null"})["result"] == "written"


def test_tool_call_runs_the_back_end_in_the_sandbox_under_a_timeout() -> None:
    from operator_support import SpinBackend, sup

    from memorepair.operators.common import OperatorError
    from memorepair.operators.executors import ToolCall

    spin = ToolCall(lambda name, iface, fns: SpinBackend(), timeout_s=1.0)
    args = {"backend": "spin", "function": "spin", "args": {}}
    with pytest.raises(OperatorError, match="timed out after 1s"):
        within(2.0, lambda: spin([sup("r", "x")], args, None))
    noop = ToolCall(lambda name, iface, fns: SpinBackend())
    assert noop([], {**args, "function": "noop"}, None) == "null"

    class Local(SpinBackend):  # not importable by the sandbox
        pass

    local = ToolCall(lambda name, iface, fns: Local())
    with pytest.raises(OperatorError, match="cannot be rebuilt in the sandbox"):
        local([], {**args, "function": "noop"}, None)


def probe(leave: str) -> dict[str, Any]:
    verdict = call("probe", {"leave": leave})
    assert verdict["ok"], verdict
    result: dict[str, Any] = verdict["result"]
    return result


def test_a_session_runs_each_job_in_a_fresh_process_of_one_worker() -> None:
    with session() as worker:
        started = worker.started
        first, second = probe("first.txt"), probe("second.txt")
        assert worker.started - started <= 1  # at most one process start for both jobs
    # Nothing of the first job reaches the second: not its memory (the class counter
    # starts again), not its files (a scratch folder each), not its descriptors (0-2 and
    # the verdict's; /proc/self/fd lists the one listing it).
    assert first["probes"] == second["probes"] == 1
    assert first["files"] == ["first.txt"] and second["files"] == ["second.txt"]
    assert len(first["fds"]) <= 5 and max(first["fds"]) <= 4, first
    if isolation().namespaces:
        assert first["pid"] == second["pid"] == 1  # each the first of its own namespace


@needs_namespaces
def test_no_system_v_ipc_outlives_its_job() -> None:
    key = 0x4D520000 + uuid.uuid4().int % 0xFFFF
    with session():
        first, second = (call("sysv", {"key": key}) for _ in range(2))
    assert first["ok"] and first["result"] == {"found": False, "created": True}, first
    assert second["result"] == {"found": False, "created": True}  # the first's went with it


@needs_namespaces
def test_a_job_killed_at_its_timeout_leaves_the_session_working() -> None:
    tag, timeout = new_tag(), 3.0
    job = {
        "chain": {"tool": "escape", "steps": [{"function": "setsid_grandchild", "args": {}}]},
        "schema": {"setsid_grandchild": {"params": {"tag": "string"}, "required": ["tag"]}},
        "backend": BACKEND,
        "max_steps": 10,
    }
    job["chain"]["steps"][0]["args"] = {"tag": tag}  # type: ignore[index]
    with session() as worker:
        started = worker.started
        with Watch(tag) as watch:
            verdict = within(
                timeout + 1.0,
                lambda: run_chain(job, timeout_s=timeout, memory_mb=512, extra_path=extra_path()),
            )
        assert watch.most >= 1 and not verdict["ok"] and "timed out" in verdict["reason"]
        assert tagged(tag) == []
        assert probe("after.txt")["files"] == ["after.txt"]
        assert worker.started - started <= 1  # the job was killed, not the worker


def test_a_worker_that_dies_is_replaced_for_the_next_job() -> None:
    with session() as worker:
        probe("one.txt")
        started, proc = worker.started, worker._proc
        assert proc is not None
        proc.kill()
        proc.wait()
        assert probe("two.txt")["files"] == ["two.txt"]
        assert worker.started == started + 1


def test_sessions_reuse_an_idle_worker_and_concurrent_ones_get_their_own(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with session() as first:
        probe("a.txt")
    with session() as second:  # the next event: no new process
        started = second.started
        probe("b.txt")
        assert second is first and second.started == started
        box: dict[str, Any] = {}
        thread = threading.Thread(target=lambda: box.update(w=_other_session()))
        thread.start()
        thread.join()
        assert box["w"] is not second  # a concurrent event waits for no one
    monkeypatch.setattr(sandbox, "IDLE_S", 0.0)
    sandbox._POOL.expire()  # idle past IDLE_S: stopped
    assert first._proc is None and not any(w is first for _, w in sandbox._POOL._idle)


def _other_session() -> Any:
    with session() as worker:
        probe("c.txt")
        return worker


def test_a_jobs_cpu_is_charged_to_the_thread_that_ran_it() -> None:
    """``cpu_clock``: the caller's CPU seconds, its sandboxed jobs' included (what a repair
    reports as ``work_cpu_s``). The job spins until its own clock reads 0.3 s."""
    before = sandbox.cpu_clock()
    verdict = call("burn", {"cpu_s": 0.3})
    assert verdict["ok"] and verdict["result"] >= 0.3, verdict
    assert sandbox.cpu_clock() - before >= 0.3
