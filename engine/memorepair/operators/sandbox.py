"""The sandbox: runs back-end code (a chain skill, a ``tool.call``) in a contained child.

Stdlib only, so the worker starts fast and the checks do not depend on pydantic.

Parent side (``run_job``, ``Worker``, ``session``): jobs go to a *worker*, a process
started as ``python -I -B -c <bootstrap>`` in a session of its own, through ``unshare
--user --map-root-user --pid --fork --kill-child --net`` where the machine allows it
(probed once, ``isolation()``). The worker imports the job's back-end module once and
forks a fresh child for every job (``sandbox_worker``); a repair event opens one
``session``, so its chains pay no process start of their own, and the worker is kept
idle for the next event (``IDLE_S``), so a busy store pays one (a one-off ``run_job``
outside a session starts a worker for that job alone).

Each job is the first process of a new PID namespace (and has new IPC and network
namespaces), so every process it starts, including those that call ``setsid()``, dies
with it when it exits or is killed at the timeout; the network namespace has only a down
loopback, so no network at all; the user namespace means it holds no capability outside.
Job, verdict and stderr go through files; the worker answers the parent on a pipe that no
job holds (the job's descriptors are closed), and the parent waits for the answer only
until the job's deadline plus a short reap, then kills the worker with everything in it.
Run as root, each job also goes into a ``pids`` cgroup of its own with ``pids.max``
(where the cgroup file system is writable), removed afterwards.

Child side (in the job's process, before any back-end code runs): RLIMIT_AS, RLIMIT_CPU,
RLIMIT_FSIZE and RLIMIT_NPROC (set in the child rather than in a ``preexec_fn``, which is
unsafe in a threaded parent), then ``confine``: a Landlock ruleset where the kernel has
one, allowing writes, file creation and removal only under the job's scratch folder (its
working directory, ``HOME`` and ``TMPDIR``) and ``/dev/null``, refusing TCP bind and
connect (ABI 4+), and scoping signals and abstract unix sockets to the sandbox (ABI 6+).

What it does not isolate (SECURITY.md has the whole list): reads (the job reads any file
the engine's user can read); CPU and memory only up to RLIMIT_CPU and RLIMIT_AS.
RLIMIT_NPROC counts per user: outside a user namespace it counts the user's other
processes too, and it never binds root (hence the cgroup). Without ``unshare`` (or where
namespaces are refused) the job only has its own session, killed as a group at the
timeout: a process that calls ``setsid()`` escapes, and only Landlock's TCP rules (if
any) keep it off the network. The back-end's module is imported in the worker, unconfined
by Landlock: it is registered (trusted) code the engine's own process has imported.

Job (``job.json`` in the job's folder)::

    {"kind": "chain",
     "chain": {"tool": str, "steps": [{"function": str, "args": {...}}]},
     "schema": {function: {"params": {name: ParamType}, "required": [name]}},
     "backend": {"module": str, "attr": str} | null,
     "max_steps": int}
    {"kind": "call", "backend": {"module": str, "attr": str}, "function": str, "args": {...}}

A string argument ``"$step:N"`` or ``"$step:N.key"`` is the result of an earlier step N
(resolved, then type-checked, at run time). Verdict (its own descriptor, JSON):
``{"ok": bool, "reason": str, "steps_run": int}`` for a chain, and ``{"ok": bool,
"reason": str, "result": value}`` for a call.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import functools
import importlib
import json
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memorepair.errors import some  # stdlib-only module: the child stays light

STEP_REF = re.compile(r"^\$step:(?P<index>\d+)(?:\.(?P<path>.+))?$")

PARAM_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "array": (list,),
    "object": (dict,),
}


def type_matches(value: Any, declared: str) -> bool:
    """JSON-schema-like check; ``True``/``False`` are not numbers here."""
    if isinstance(value, bool) and declared != "boolean":
        return False
    return isinstance(value, PARAM_TYPES.get(declared, ()))


def check_call(
    functions: Mapping[str, Mapping[str, Any]],
    function: str,
    args: Mapping[str, Any],
    *,
    skip_value: Callable[[Any], bool] | None = None,
) -> str | None:
    """Why a call does not fit a schema (``None`` when it does).

    ``functions`` is the JSON form of ``Interface.functions``. ``skip_value(value)`` marks
    values whose type is only known at run time (references to inputs or earlier steps).
    """
    spec = functions.get(function)
    if spec is None:
        known = ", ".join(sorted(functions)) or "none"
        return f"function {function!r} is not in the interface (it has: {known})"
    params: Mapping[str, str] = spec.get("params", {})
    missing = [p for p in spec.get("required", []) if p not in args]
    if missing:
        return f"{function}: {some(missing, 'required parameter')} missing"
    extra = sorted(p for p in args if p not in params)
    if extra:
        return f"{function}: {some(extra, 'unknown parameter')}"
    for name, value in args.items():
        if skip_value is not None and skip_value(value):
            continue
        if not type_matches(value, params[name]):
            return (
                f"{function}: parameter {name!r} should be {params[name]}, "
                f"got {type(value).__name__} {value!r}"
            )
    return None


def _resolve(value: Any, results: list[Any]) -> Any:
    if not isinstance(value, str):
        return value
    match = STEP_REF.match(value)
    if match is None:
        return value
    result = results[int(match["index"])]
    for key in (match["path"] or "").split(".") if match["path"] else []:
        result = result[int(key)] if isinstance(result, list) else result[key]
    return result


def _is_step_ref(value: Any) -> bool:
    return isinstance(value, str) and STEP_REF.match(value) is not None


def verdict(ok: bool, reason: str = "", steps_run: int = 0) -> dict[str, Any]:
    return {"ok": ok, "reason": reason, "steps_run": steps_run}


def check_chain(job: Mapping[str, Any]) -> dict[str, Any]:
    """Static checks of every step, then (with a back-end) execution; the verdict."""
    chain, schema = job.get("chain"), job.get("schema")
    if not isinstance(chain, dict) or not isinstance(chain.get("steps"), list):
        return verdict(False, "chain is not {'tool', 'steps': [...]}")
    if not isinstance(schema, dict):
        return verdict(False, "no interface schema to check against")
    steps: list[Any] = chain["steps"]
    if len(steps) > int(job.get("max_steps", 100)):
        return verdict(False, f"{len(steps)} steps > max_steps")
    for i, step in enumerate(steps):
        problem = _step_problem(schema, i, step)
        if problem:
            return verdict(False, f"step {i}: {problem}")
    where = job.get("backend")
    if where is None:
        return verdict(True, "schema checked; no back-end to run")
    try:
        backend = getattr(importlib.import_module(where["module"]), where["attr"])()
    except Exception as exc:
        return verdict(False, f"could not rebuild back-end {where}: {exc}")
    return _run_steps(backend, schema, steps)


def _step_problem(schema: Mapping[str, Any], i: int, step: Any) -> str | None:
    """What is wrong with step `i` before anything runs (its shape, its references to
    earlier steps, its call against the interface), or None."""
    if not isinstance(step, dict) or not isinstance(step.get("function"), str):
        return "no function name"
    args = step.get("args", {})
    if not isinstance(args, dict):
        return "args is not an object"
    for value in args.values():
        ref = STEP_REF.match(value) if isinstance(value, str) else None
        if ref is not None and int(ref["index"]) >= i:
            return f"{value!r} is not an earlier step"
    return check_call(schema, step["function"], args, skip_value=_is_step_ref)


def _run_steps(backend: Any, schema: Mapping[str, Any], steps: list[Any]) -> dict[str, Any]:
    """Run the checked steps on the back-end in order, each call checked again once its
    `$step:N` arguments are resolved; the verdict names the first step that fails."""
    state: dict[str, Any] = {}
    results: list[Any] = []
    for i, step in enumerate(steps):
        try:
            args = {k: _resolve(v, results) for k, v in step.get("args", {}).items()}
            problem = check_call(schema, step["function"], args)
            if problem:
                return verdict(False, f"step {i}: {problem}", i)
            results.append(backend.call(step["function"], args, state))
        except Exception as exc:
            return verdict(
                False, f"step {i} ({step['function']}) raised {type(exc).__name__}: {exc}", i
            )
    return verdict(True, "", len(steps))


def call_backend(job: Mapping[str, Any]) -> dict[str, Any]:
    """One ``tool.call``: rebuild the back-end, run the function, return its JSON result."""
    where, function, args = job.get("backend"), job.get("function"), job.get("args")
    if not isinstance(where, dict) or not isinstance(function, str) or not isinstance(args, dict):
        return {"ok": False, "reason": "call job needs backend, function and args"}
    try:
        backend = getattr(importlib.import_module(where["module"]), where["attr"])()
    except Exception as exc:
        return {"ok": False, "reason": f"could not rebuild back-end {where}: {exc}"}
    try:
        result = backend.call(function, args, {})
    except Exception as exc:
        return {"ok": False, "reason": f"{function} raised {type(exc).__name__}: {exc}"}
    return {"ok": True, "reason": "", "result": result}


def run(job: Mapping[str, Any]) -> str:
    """The job's verdict as JSON text (the job's side, in its sandboxed process; never
    raises: a crash is a failed verdict)."""
    try:
        result = call_backend(job) if job.get("kind") == "call" else check_chain(job)
        return json.dumps(result, allow_nan=False)
    except Exception as exc:
        return json.dumps(verdict(False, f"sandbox error: {type(exc).__name__}: {exc}"))


# -- confinement, run in the child before any back-end code --------------------------------

_SYS_CREATE_RULESET, _SYS_ADD_RULE, _SYS_RESTRICT_SELF = 444, 445, 446  # same on every arch
_PR_SET_NO_NEW_PRIVS = 38
_FS_WRITE_ABI1 = (
    (1 << 1)  # WRITE_FILE
    | (1 << 4)  # REMOVE_DIR
    | (1 << 5)  # REMOVE_FILE
    | (1 << 6)  # MAKE_CHAR
    | (1 << 7)  # MAKE_DIR
    | (1 << 8)  # MAKE_REG
    | (1 << 9)  # MAKE_SOCK
    | (1 << 10)  # MAKE_FIFO
    | (1 << 11)  # MAKE_BLOCK
    | (1 << 12)  # MAKE_SYM
)
_FS_REFER, _FS_TRUNCATE = 1 << 13, 1 << 14  # ABI 2, ABI 3
_NET_BIND_TCP, _NET_CONNECT_TCP = 1 << 0, 1 << 1  # ABI 4
_SCOPE_ABSTRACT_UNIX, _SCOPE_SIGNAL = 1 << 0, 1 << 1  # ABI 6


class _RulesetAttr(ctypes.Structure):
    _fields_ = (
        ("handled_access_fs", ctypes.c_uint64),
        ("handled_access_net", ctypes.c_uint64),
        ("scoped", ctypes.c_uint64),
    )


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = (("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32))


def landlock_abi() -> int:
    """The kernel's Landlock ABI version (0: none)."""
    libc = ctypes.CDLL(None, use_errno=True)
    version = int(libc.syscall(_SYS_CREATE_RULESET, None, 0, 1))  # ..._CREATE_RULESET_VERSION
    return max(version, 0)


def confine(scratch: str) -> int:
    """Landlock: no writes outside ``scratch`` (and /dev/null), no TCP, scoped signals.

    Irrevocable for this process and everything it starts. Returns the ABI used (0: the
    kernel has no Landlock, nothing was restricted).
    """
    abi = landlock_abi()
    if abi < 1:
        return 0
    fs = _FS_WRITE_ABI1 | (_FS_REFER if abi >= 2 else 0) | (_FS_TRUNCATE if abi >= 3 else 0)
    attr = _RulesetAttr(fs, _NET_BIND_TCP | _NET_CONNECT_TCP if abi >= 4 else 0, 0)
    if abi >= 6:
        attr.scoped = _SCOPE_ABSTRACT_UNIX | _SCOPE_SIGNAL
    size = 8 if abi < 4 else 16 if abi < 6 else 24
    libc = ctypes.CDLL(None, use_errno=True)
    ruleset = int(libc.syscall(_SYS_CREATE_RULESET, ctypes.byref(attr), size, 0))
    if ruleset < 0:
        raise OSError(ctypes.get_errno(), "landlock_create_ruleset failed")
    try:
        for path, access in ((scratch, fs), ("/dev/null", (1 << 1) | (fs & _FS_TRUNCATE))):
            fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            try:
                rule = _PathBeneath(access, fd)
                if libc.syscall(_SYS_ADD_RULE, ruleset, 1, ctypes.byref(rule), 0) != 0:
                    raise OSError(ctypes.get_errno(), f"landlock_add_rule {path} failed")
            finally:
                os.close(fd)
        if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "PR_SET_NO_NEW_PRIVS failed")
        if libc.syscall(_SYS_RESTRICT_SELF, ruleset, 0) != 0:
            raise OSError(ctypes.get_errno(), "landlock_restrict_self failed")
    finally:
        os.close(ruleset)
    return abi


WORKER_BOOTSTRAP = """\
import sys
sys.path[:0] = sys.argv[2:]
from memorepair.operators.sandbox_worker import serve
serve(sys.argv[1] == "1")
"""

# -- parent side ---------------------------------------------------------------------------

#: Tasks (processes and threads) one job may have at once, its first process included.
DEFAULT_MAX_PROCESSES = 64
#: How long the parent waits, after a kill, for the job's processes to be gone.
_REAP_S = 0.5
#: Processes of the sandbox's user namespace besides the job's own (unshare, the worker,
#: the job's keeper), which RLIMIT_NPROC counts with them.
_SUPERVISORS = 3


@dataclass(frozen=True)
class Isolation:
    """What this machine gives the sandbox (probed once per process)."""

    namespaces: bool  # PID + network + user namespaces through `unshare`
    cgroup: str | None  # a writable `pids` cgroup folder to make job cgroups in (root)
    landlock: int  # Landlock ABI version, 0 if none

    def as_dict(self) -> dict[str, Any]:
        return {"namespaces": self.namespaces, "cgroup": self.cgroup, "landlock": self.landlock}


_UNSHARE = ["--user", "--map-root-user", "--pid", "--fork", "--kill-child", "--net"]


@functools.cache
def isolation() -> Isolation:
    unshare = shutil.which("unshare")
    namespaces = False
    if unshare is not None:
        try:
            probe = subprocess.run(
                [unshare, *_UNSHARE, "true"], capture_output=True, timeout=10, check=False
            )
            namespaces = probe.returncode == 0
        except (OSError, subprocess.TimeoutExpired):
            namespaces = False
    return Isolation(namespaces, _pids_cgroup_root(), landlock_abi())


def _pids_cgroup_root() -> str | None:
    """A cgroup folder where a `pids` child can be made: v1's `pids` hierarchy, or the
    v2 cgroup of this process when it delegates the `pids` controller. Root only."""
    if os.geteuid() != 0:
        return None
    v1 = Path("/sys/fs/cgroup/pids")
    if (v1 / "cgroup.procs").is_file() and os.access(v1, os.W_OK):
        return str(v1)
    try:
        line = next(
            x for x in Path("/proc/self/cgroup").read_text().splitlines() if x.startswith("0::")
        )
    except (OSError, StopIteration):
        return None
    v2 = Path("/sys/fs/cgroup") / line[3:].lstrip("/")
    try:
        delegated = "pids" in (v2 / "cgroup.subtree_control").read_text().split()
    except OSError:
        return None
    return str(v2) if delegated and os.access(v2, os.W_OK) else None


def import_root(module_name: str) -> str | None:
    """The ``sys.path`` entry that makes ``module_name`` importable (for the child)."""
    module = sys.modules.get(module_name)
    file = getattr(module, "__file__", None)
    if file is None:
        return None
    root = Path(file).resolve().parent
    depth = module_name.count(".") + (1 if Path(file).name == "__init__.py" else 0)
    for _ in range(depth):
        root = root.parent
    return str(root)


@contextmanager
def _job_cgroup(root: str | None, max_processes: int) -> Iterator[Path | None]:
    """A fresh `pids` cgroup with `pids.max`; every task left in it is killed at the end."""
    if root is None:
        yield None
        return
    group = Path(root) / f"memorepair-sandbox-{uuid.uuid4().hex[:12]}"
    try:
        group.mkdir()
        (group / "pids.max").write_text(f"{max_processes}\n")
    except OSError:
        yield None
        return
    try:
        yield group
    finally:
        _empty_cgroup(group)


def _empty_cgroup(group: Path) -> None:
    deadline = time.monotonic() + _REAP_S
    while True:
        try:
            pids = [int(p) for p in (group / "cgroup.procs").read_text().split()]
        except OSError:
            pids = []
        for pid in pids:
            _signal(pid, signal.SIGKILL)
        try:
            group.rmdir()
            return
        except OSError:
            if time.monotonic() > deadline:
                return  # a task still exiting keeps the (empty-to-be) folder; it holds nothing
            time.sleep(0.01)


class _WorkerGone(Exception):
    """The worker ended (or broke its pipe) before answering."""


class Worker:
    """One contained worker process that runs jobs one at a time, each in a fresh,
    limited child of its own (``sandbox_worker``): the start-up of a process and its
    imports is paid once per worker, not once per job.

    The worker is started through ``unshare`` as a one-off job used to be (``isolation``)
    on the first job, in a session and a temporary folder of its own; each job gets a
    folder inside (its files and its scratch folder) and, as root, a `pids` cgroup of its
    own. A worker that ends or misses a deadline is killed with everything it started,
    and the next job starts a new one. Jobs are serialised (one lock): a worker is meant
    for one repair event (``session``).
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[bytes] | None = None
        self._base: Path | None = None
        self._jobs = 0
        #: Worker processes started so far (a new one after a kill or a crash).
        self.started = 0

    def __enter__(self) -> Worker:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def run(
        self,
        job: Mapping[str, Any],
        *,
        timeout_s: float,
        memory_mb: int,
        extra_path: list[str],
        max_processes: int = DEFAULT_MAX_PROCESSES,
    ) -> dict[str, Any]:
        """Run ``job`` in a fresh contained child; its JSON verdict, or a failed one.

        Returns by ``timeout_s`` plus a short reap (well under a second): a job still
        running at its deadline is killed with all it started, and a worker that does not
        answer by then is killed too.
        """
        with self._lock:
            proc, base = self._ensure()
            self._jobs += 1
            folder = base / str(self._jobs)
            (folder / "scratch").mkdir(parents=True)
            try:
                (folder / "job.json").write_text(json.dumps(job), encoding="utf-8")
                with _job_cgroup(isolation().cgroup, max_processes) as group:
                    limits = {
                        "memory": memory_mb << 20,
                        "cpu": max(1, int(timeout_s) + 1),
                        "nproc": max_processes + _SUPERVISORS,
                    }
                    return self._run(proc, job, folder, group, timeout_s, limits, extra_path)
            finally:
                shutil.rmtree(folder, ignore_errors=True)

    def _run(
        self,
        proc: subprocess.Popen[bytes],
        job: Mapping[str, Any],
        folder: Path,
        group: Path | None,
        timeout_s: float,
        limits: Mapping[str, int],
        extra_path: list[str],
    ) -> dict[str, Any]:
        deadline = time.monotonic() + timeout_s
        request = {
            "folder": str(folder),
            "deadline": deadline,
            "path": [p for p in extra_path if p],
            "backend": job.get("backend"),
            "cgroup": str(group) if group is not None else None,
            "limits": dict(limits),
        }
        try:
            reply = _ask(proc, request, deadline + 2 * _REAP_S)
        except _WorkerGone:
            tail = self._stderr_tail()
            self._stop()
            return verdict(False, f"sandbox worker exited: {tail}")
        _charge(float(reply.get("cpu_s") or 0.0) if reply else 0.0)
        if reply is None or reply.get("timed_out"):
            if reply is None:
                self._stop()  # it missed the deadline: it goes, with whatever it started
            return verdict(False, f"timed out after {timeout_s:g}s (killed)")
        if reply.get("error"):
            return verdict(False, f"sandbox: {reply['error']}")
        return _read_verdict(folder, reply.get("returncode"))

    def _ensure(self) -> tuple[subprocess.Popen[bytes], Path]:
        """The running worker, started now if there is none (or it ended)."""
        if self._proc is not None and self._base is not None and self._proc.poll() is None:
            return self._proc, self._base
        self._stop()
        machine = isolation()
        base = Path(tempfile.mkdtemp(prefix="memorepair-sandbox-"))
        package_root = import_root("memorepair.operators.sandbox")
        argv = [sys.executable, "-I", "-B", "-c", WORKER_BOOTSTRAP]
        argv += ["1" if machine.namespaces else "0", *([package_root] if package_root else [])]
        if machine.namespaces:
            argv = [str(shutil.which("unshare")), *_UNSHARE, *argv]
        env = {"LC_ALL": "C.UTF-8", "HOME": str(base), "TMPDIR": str(base)}
        with open(base / "worker.err", "wb") as err:
            proc = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=err,
                env=env,
                cwd=base,
                start_new_session=True,
            )
        self._proc, self._base = proc, base
        self.started += 1
        return proc, base

    def _stderr_tail(self) -> str:
        if self._base is None:
            return ""
        try:
            text = (self._base / "worker.err").read_bytes()[-4000:].decode("utf-8", "replace")
        except OSError:
            return ""
        return (text.strip().splitlines()[-1:] or [""])[0]

    def _stop(self) -> None:
        """Kill the worker with everything it started; remove its folder."""
        proc, base = self._proc, self._base
        self._proc = self._base = None
        if proc is not None:
            for pipe in (proc.stdin, proc.stdout):
                if pipe is not None:
                    with contextlib.suppress(OSError):
                        pipe.close()
            _kill_tree(proc)
        if base is not None:
            shutil.rmtree(base, ignore_errors=True)

    @property
    def alive(self) -> bool:
        """Started and still running (a worker that was never started counts as alive:
        it starts on its first job)."""
        return self._proc is None or self._proc.poll() is None

    def close(self) -> None:
        with self._lock:
            self._stop()


def _ask(
    proc: subprocess.Popen[bytes], request: Mapping[str, Any], deadline: float
) -> dict[str, Any] | None:
    """Send one request line and read the answer line by ``deadline`` (None: missed)."""
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write(json.dumps(request).encode("utf-8") + b"\n")
        proc.stdin.flush()
    except OSError as exc:
        raise _WorkerGone from exc
    fd, buffer = proc.stdout.fileno(), b""
    while not buffer.endswith(b"\n"):
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return None
        ready, _, _ = select.select([fd], [], [], remaining)
        if ready:
            chunk = os.read(fd, 65536)
            if not chunk:
                raise _WorkerGone
            buffer += chunk
    answer: dict[str, Any] = json.loads(buffer)
    return answer


def _read_verdict(folder: Path, returncode: int | None) -> dict[str, Any]:
    try:
        result: dict[str, Any] = json.loads((folder / "out").read_bytes().decode("utf-8"))
    except (OSError, ValueError):
        try:
            tail = (folder / "err").read_bytes()[-4000:].decode("utf-8", "replace")
        except OSError:
            tail = ""
        last = tail.strip().splitlines()[-1:] or [""]
        return verdict(False, f"sandbox exited with status {returncode}: {last[0]}")
    return result


def _kill_tree(proc: subprocess.Popen[bytes]) -> None:
    """SIGKILL the child's session and its direct children, then wait until they are gone.

    With namespaces the direct child of `unshare` is the namespace's first process: the
    kernel kills everything else in the namespace when it dies (even processes that left
    the session), before it can be reaped, so waiting for it waits for them all.
    """
    children = _children(proc.pid)
    for pid in children:
        _signal(pid, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    deadline = time.monotonic() + _REAP_S
    while any(_running(pid) for pid in children) and time.monotonic() < deadline:
        time.sleep(0.005)


def _children(pid: int) -> list[int]:
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return []
    return [int(p) for p in text.split()]


def _signal(pid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, sig)


def _running(pid: int) -> bool:
    """Alive and not a zombie (a zombie has finished tearing its namespace down)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


#: How long a worker left idle by a session waits for the next one (the next repair event)
#: before it is stopped: its start (a process and its imports) is then paid once per busy
#: period, not once per event, and estimated costs stay additive (docs/values.md).
IDLE_S = 120.0


class _Pool:
    """Idle workers, most recently used last; each session takes one for itself."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._idle: list[tuple[float, Worker]] = []

    def take(self) -> Worker:
        with self._lock:
            stale = self._expire()
            worker = self._idle.pop()[1] if self._idle else Worker()
        for old in stale:
            old.close()
        return worker

    def give(self, worker: Worker) -> None:
        if not worker.alive:
            worker.close()
            return
        with self._lock:
            self._idle.append((time.monotonic(), worker))
        timer = threading.Timer(IDLE_S + 0.1, self.expire)
        timer.daemon = True
        timer.start()

    def expire(self) -> None:
        with self._lock:
            stale = self._expire()
        for old in stale:
            old.close()

    def _expire(self) -> list[Worker]:
        now = time.monotonic()
        stale = [w for t, w in self._idle if now - t >= IDLE_S]
        self._idle = [(t, w) for t, w in self._idle if now - t < IDLE_S]
        return stale

    def close(self) -> None:
        with self._lock:
            idle, self._idle = self._idle, []
        for _, worker in idle:
            worker.close()


_POOL = _Pool()
atexit.register(_POOL.close)
_SESSION: ContextVar[Worker | None] = ContextVar("memorepair_sandbox_worker", default=None)
_CHARGED = threading.local()


def _charge(cpu_s: float) -> None:
    _CHARGED.seconds = getattr(_CHARGED, "seconds", 0.0) + cpu_s


def cpu_clock() -> float:
    """CPU seconds of this thread's work, the sandboxed jobs it ran included: a clock
    that a loaded machine does not run faster (time spent waiting for a core, or for a
    job's process to start, is not in it; time an operator waits on I/O is not either)."""
    return time.thread_time() + getattr(_CHARGED, "seconds", 0.0)


@contextmanager
def session() -> Iterator[Worker]:
    """Every sandboxed job run inside (in this thread or task) goes to one worker: one
    process start for a repair event's chains and tool calls instead of one each. The
    worker is taken from the idle ones (or started) and given back at the end, kept for
    the next session for up to ``IDLE_S``; concurrent sessions get a worker each. Nested
    blocks share the outer one's worker."""
    current = _SESSION.get()
    if current is not None:
        yield current
        return
    worker = _POOL.take()
    token = _SESSION.set(worker)
    try:
        yield worker
    finally:
        _SESSION.reset(token)
        _POOL.give(worker)


def run_job(
    job: Mapping[str, Any],
    *,
    timeout_s: float,
    memory_mb: int,
    extra_path: list[str],
    max_processes: int = DEFAULT_MAX_PROCESSES,
) -> dict[str, Any]:
    """Run ``job`` in a fresh contained child (``Worker.run``): in the open ``session``'s
    worker, else in a worker started for it alone."""
    current = _SESSION.get()
    if current is not None:
        return current.run(
            job,
            timeout_s=timeout_s,
            memory_mb=memory_mb,
            extra_path=extra_path,
            max_processes=max_processes,
        )
    with Worker() as worker:
        return worker.run(
            job,
            timeout_s=timeout_s,
            memory_mb=memory_mb,
            extra_path=extra_path,
            max_processes=max_processes,
        )


def run_chain(
    job: Mapping[str, Any], *, timeout_s: float, memory_mb: int, extra_path: list[str]
) -> dict[str, Any]:
    """Run ``check_chain`` on ``job`` in the sandbox; returns the verdict."""
    return run_job(
        {**job, "kind": "chain"}, timeout_s=timeout_s, memory_mb=memory_mb, extra_path=extra_path
    )
