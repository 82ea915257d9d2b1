"""The sandbox worker's side: one contained process that runs each job in a fresh child.

Starting a Python interpreter and importing a back-end took most of a chain skill's
validation (about 0.3 s on an idle machine, 0.7-2 s on a loaded one, for a check that
itself takes milliseconds). The worker pays that once per repair event: it is started
contained exactly as a one-off job used to be (``sandbox.Worker``), imports each job's
back-end module once (code the engine process has already imported: registered
back-ends are trusted code, SECURITY.md), and then forks every job from itself, so each
job runs in a process of its own that starts from the worker's imports and nothing else:
no job sees another's memory, files or processes.

Per job (``handle``): the worker forks a *keeper*, which (where the machine allows
namespaces) unshares a new PID, IPC and network namespace for its children and forks the
*job*. The job is the first process of its PID namespace, so every process it starts,
including those that call ``setsid()``, dies with it; it joins the job's ``pids`` cgroup
(root) before anything else, takes its own session, has its standard files pointed at the
job's files (every other descriptor closed, the worker's pipes included), sets
RLIMIT_AS/CPU/FSIZE/NPROC, confines itself with Landlock to its scratch folder, and only
then runs the job (``sandbox.run``). The keeper kills the job at the request's deadline
(a monotonic time shared with the engine process), waits until it and its namespace are
gone, and writes the job's status. The worker answers the engine one JSON line per
request.

Stdlib only (and ``sandbox``, which is stdlib only), so the worker starts fast.
"""

from __future__ import annotations

import contextlib
import ctypes
import importlib
import json
import os
import resource
import select
import signal
import sys
import time
from pathlib import Path
from typing import Any

from memorepair.operators.sandbox import confine, run

#: unshare(2) flags for the job's own namespaces (the worker already has a user namespace).
CLONE_NEWPID, CLONE_NEWIPC, CLONE_NEWNET = 0x20000000, 0x08000000, 0x40000000
#: The job's descriptor for its verdict (0-2 are /dev/null and its stderr file).
VERDICT_FD = 3
#: Keeper exit status when the job's namespaces could not be made (the job never ran).
NO_NAMESPACE = 3


def serve(namespaces: bool) -> None:
    """Answer one request per line on stdin with one line on stdout, until stdin ends."""
    for line in sys.stdin.buffer:
        reply = handle(json.loads(line), namespaces)
        sys.stdout.buffer.write(json.dumps(reply).encode("utf-8") + b"\n")
        sys.stdout.buffer.flush()


def handle(request: dict[str, Any], namespaces: bool) -> dict[str, Any]:
    """Run one job in a fresh child (see the module); its status."""
    for entry in reversed(request["path"]):
        if entry not in sys.path:
            sys.path.insert(0, entry)
    preload(request.get("backend"))
    keeper = os.fork()
    if keeper == 0:  # pragma: no cover - runs in the child, reported through its status
        code = 1
        try:
            code = keep(request, namespaces)
        finally:
            os._exit(code)
    _, status = os.waitpid(keeper, 0)
    folder = Path(request["folder"])
    try:
        reply: dict[str, Any] = json.loads((folder / "status").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        code = os.waitstatus_to_exitcode(status)
        reason = "could not make the job's namespaces" if code == NO_NAMESPACE else ""
        reply = {"timed_out": False, "returncode": None, "error": reason or f"keeper {code}"}
    return reply


def preload(backend: Any) -> None:
    """Import the back-end's module and find its class once, for every later job.

    Errors are left to the job, which imports it again and reports them in its verdict.
    """
    if not isinstance(backend, dict):
        return
    with contextlib.suppress(Exception):
        getattr(importlib.import_module(str(backend["module"])), str(backend["attr"]))


def keep(request: dict[str, Any], namespaces: bool) -> int:
    """The keeper: fork the job in namespaces of its own, kill it at the deadline, and
    write its status once it and everything it started are gone."""
    if namespaces:
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.unshare(CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWNET) != 0:
            return NO_NAMESPACE
    job = os.fork()
    if job == 0:  # pragma: no cover - runs in the child
        try:
            start_job(request)
        finally:
            os._exit(1)
    timed_out = not wait_until(job, float(request["deadline"]))
    if timed_out:
        _signal(job, signal.SIGKILL)
    if not namespaces:  # its session's daemons (one that called setsid() escapes)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(job, signal.SIGKILL)
    _, status, usage = os.wait4(job, 0)
    result = {
        "timed_out": timed_out,
        "returncode": os.waitstatus_to_exitcode(status),
        "cpu_s": usage.ru_utime + usage.ru_stime,  # the job's own CPU seconds
    }
    (Path(request["folder"]) / "status").write_text(json.dumps(result), encoding="utf-8")
    return 0


def wait_until(pid: int, deadline: float) -> bool:
    """Whether ``pid`` (a child) exited before ``deadline`` (``time.monotonic()``); it is
    not reaped. A pidfd where the kernel has one, else polling."""
    try:
        fd = os.pidfd_open(pid)
    except (AttributeError, OSError):
        return _poll_until(pid, deadline)
    try:
        poller = select.poll()
        poller.register(fd, select.POLLIN)
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return bool(poller.poll(0))
            if poller.poll(remaining * 1000.0):
                return True
    finally:
        os.close(fd)


def _poll_until(pid: int, deadline: float) -> bool:
    while time.monotonic() < deadline:
        if os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None:
            return True
        time.sleep(0.005)
    return False


def _signal(pid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, sig)


def start_job(request: dict[str, Any]) -> None:  # pragma: no cover - runs in the child
    """The job itself: cgroup, session, files, limits, Landlock, then the work."""
    folder = Path(request["folder"])
    scratch = folder / "scratch"
    group = request.get("cgroup")
    if group:  # "0": the writing process, before it can start anything
        (Path(group) / "cgroup.procs").write_text("0\n")
    os.setsid()
    job = json.loads((folder / "job.json").read_text(encoding="utf-8"))
    out = os.open(folder / "out", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    err = os.open(folder / "err", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    null = os.open(os.devnull, os.O_RDONLY)
    # The verdict goes to its own descriptor (3): what the back-end prints lands in the
    # stderr file with its errors, never in the verdict.
    for fd, target in ((null, 0), (err, 1), (err, 2), (out, VERDICT_FD)):
        os.dup2(fd, target)
    os.closerange(VERDICT_FD + 1, 1 << 20)  # the worker's pipes and files are not the job's
    os.chdir(scratch)
    os.environ.clear()
    os.environ.update({"LC_ALL": "C.UTF-8", "HOME": str(scratch), "TMPDIR": str(scratch)})
    limits = request["limits"]
    memory, cpu, nproc = int(limits["memory"]), int(limits["cpu"]), int(limits["nproc"])
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu))
    resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 20, 1 << 20))
    resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))
    confine(str(scratch))
    data = run(job).encode("utf-8")
    while data:
        data = data[os.write(VERDICT_FD, data) :]
    os._exit(0)
