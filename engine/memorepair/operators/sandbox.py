"""The sandbox: runs back-end code (a chain skill, a ``tool.call``) in a contained child.

Stdlib only, so the child starts fast and the checks do not depend on pydantic.

Parent side (``run_job``): the child is ``python -I -B -c <bootstrap>`` in a session of
its own, started through ``unshare --user --map-root-user --pid --fork --kill-child
--net`` where the machine allows it (probed once, ``isolation()``): a new PID namespace,
so every process the job starts, including those that call ``setsid()``, dies with the
namespace's first process (the bootstrap) when it exits or is killed at the timeout; a
new network namespace with only a down loopback, so no network at all; and a user
namespace, so the job holds no capability outside it. Job, verdict and stderr go through
files, never pipes: a process that keeps a descriptor open cannot make the parent wait
past the deadline. Run as root, the job also goes into a ``pids`` cgroup of its own with
``pids.max`` (where the cgroup file system is writable), removed afterwards.

Child side (the bootstrap, before any back-end code is imported): RLIMIT_AS, RLIMIT_CPU,
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
any) keep it off the network.

Job (stdin, JSON)::

    {"kind": "chain",
     "chain": {"tool": str, "steps": [{"function": str, "args": {...}}]},
     "schema": {function: {"params": {name: ParamType}, "required": [name]}},
     "backend": {"module": str, "attr": str} | null,
     "max_steps": int}
    {"kind": "call", "backend": {"module": str, "attr": str}, "function": str, "args": {...}}

A string argument ``"$step:N"`` or ``"$step:N.key"`` is the result of an earlier step N
(resolved, then type-checked, at run time). Verdict (stdout, JSON):
``{"ok": bool, "reason": str, "steps_run": int}`` for a chain, and ``{"ok": bool,
"reason": str, "result": value}`` for a call.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import importlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

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


def main() -> None:
    try:
        job = json.loads(sys.stdin.buffer.read().decode("utf-8"))
        result = call_backend(job) if job.get("kind") == "call" else check_chain(job)
        text = json.dumps(result, allow_nan=False)
    except Exception as exc:
        text = json.dumps(verdict(False, f"sandbox error: {type(exc).__name__}: {exc}"))
    sys.stdout.buffer.write(text.encode("utf-8"))
    sys.stdout.buffer.flush()


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


BOOTSTRAP = """\
import resource, sys
mem, cpu, nproc, scratch = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu))
resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 20, 1 << 20))
resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))
sys.path[:0] = sys.argv[5:]
from memorepair.operators.sandbox import confine, main
confine(scratch)
main()
"""

# -- parent side ---------------------------------------------------------------------------

#: Tasks (processes and threads) one job may have at once, the bootstrap included.
DEFAULT_MAX_PROCESSES = 64
#: How long the parent waits, after a kill, for the job's processes to be gone.
_REAP_S = 0.5


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


def run_job(
    job: Mapping[str, Any],
    *,
    timeout_s: float,
    memory_mb: int,
    extra_path: list[str],
    max_processes: int = DEFAULT_MAX_PROCESSES,
) -> dict[str, Any]:
    """Run ``job`` in the contained child; its JSON verdict, or a failed one.

    Returns by ``timeout_s`` plus a short reap (well under a second): nothing here waits
    on a pipe, and a job still running at the deadline is killed with all it started.
    """
    package_root = import_root("memorepair.operators.sandbox")
    path = [p for p in [package_root, *extra_path] if p]
    machine = isolation()
    base = Path(tempfile.mkdtemp(prefix="memorepair-sandbox-"))
    scratch = base / "scratch"
    scratch.mkdir()
    cpu = max(1, int(timeout_s) + 1)
    argv = [sys.executable, "-I", "-B", "-c", BOOTSTRAP]
    argv += [str(memory_mb << 20), str(cpu), str(max_processes), str(scratch), *path]
    try:
        with _job_cgroup(machine.cgroup, max_processes) as group:
            if machine.namespaces:
                argv = [str(shutil.which("unshare")), *_UNSHARE, *argv]
            if group is not None:  # join the cgroup before anything of the job exists
                argv = ["/bin/sh", "-c", _JOIN_CGROUP, str(group), *argv]
            return _supervise(argv, job, base, scratch, timeout_s)
    finally:
        shutil.rmtree(base, ignore_errors=True)


_JOIN_CGROUP = 'echo $$ > "$0/cgroup.procs" && exec "$@"'


def _supervise(
    argv: list[str], job: Mapping[str, Any], base: Path, scratch: Path, timeout_s: float
) -> dict[str, Any]:
    """Start the child with files for stdin/stdout/stderr and wait for it, at most
    ``timeout_s``; whatever it started is gone when this returns."""
    with _io(base / "job.json") as stdin, _io(base / "out") as out, _io(base / "err") as err:
        stdin.write(json.dumps(job).encode("utf-8"))
        stdin.flush()
        stdin.seek(0)
        env = {"LC_ALL": "C.UTF-8", "HOME": str(scratch), "TMPDIR": str(scratch)}
        proc = subprocess.Popen(
            argv, stdin=stdin, stdout=out, stderr=err, env=env, cwd=scratch, start_new_session=True
        )
        try:
            proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            _kill_tree(proc)
            return verdict(False, f"timed out after {timeout_s:g}s (killed)")
        _kill_tree(proc)  # daemons it left behind in its session (outside a namespace)
        out.seek(0)
        err.seek(0)
        text, tail = out.read(), err.read()[-4000:]
    try:
        result: dict[str, Any] = json.loads(text.decode("utf-8"))
    except ValueError:
        last = tail.decode("utf-8", "replace").strip().splitlines()[-1:] or [""]
        return verdict(False, f"sandbox exited with status {proc.returncode}: {last[0]}")
    return result


def _io(path: Path) -> IO[bytes]:
    return open(path, "w+b")


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


def run_chain(
    job: Mapping[str, Any], *, timeout_s: float, memory_mb: int, extra_path: list[str]
) -> dict[str, Any]:
    """Run ``check_chain`` on ``job`` in the sandbox; returns the verdict."""
    return run_job(
        {**job, "kind": "chain"}, timeout_s=timeout_s, memory_mb=memory_mb, extra_path=extra_path
    )


if __name__ == "__main__":
    main()
