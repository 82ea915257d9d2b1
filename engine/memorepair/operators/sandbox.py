"""The chain sandbox: runs one chain skill in a child process and prints a JSON verdict.

Stdlib only, so the child starts fast and the checks do not depend on pydantic. The parent
(``run_chain``) starts ``python -I -B -c <bootstrap>``: the bootstrap sets the resource
limits first (RLIMIT_AS, RLIMIT_CPU, RLIMIT_FSIZE; done in the child rather than in a
``preexec_fn``, which is unsafe in a threaded parent), then puts the package's parent
directory on ``sys.path`` (``-I`` ignores PYTHONPATH) and calls ``main``. The environment
is empty but for a UTF-8 locale; the parent kills the process group at the wall-clock
timeout.

Job (stdin, JSON)::

    {"chain": {"tool": str, "steps": [{"function": str, "args": {...}}]},
     "schema": {function: {"params": {name: ParamType}, "required": [name]}},
     "backend": {"module": str, "attr": str} | null,
     "max_steps": int}

A string argument ``"$step:N"`` or ``"$step:N.key"`` is the result of an earlier step N
(resolved, then type-checked, at run time). Verdict (stdout, JSON):
``{"ok": bool, "reason": str, "steps_run": int}``.
"""

from __future__ import annotations

import importlib
import json
import os
import re
import signal
import subprocess
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

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
        return f"{function}: required parameter(s) {missing} missing"
    extra = sorted(p for p in args if p not in params)
    if extra:
        return f"{function}: unknown parameter(s) {extra}"
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
        if not isinstance(step, dict) or not isinstance(step.get("function"), str):
            return verdict(False, f"step {i}: no function name")
        args = step.get("args", {})
        if not isinstance(args, dict):
            return verdict(False, f"step {i}: args is not an object")
        for value in args.values():
            ref = STEP_REF.match(value) if isinstance(value, str) else None
            if ref is not None and int(ref["index"]) >= i:
                return verdict(False, f"step {i}: {value!r} is not an earlier step")
        problem = check_call(schema, step["function"], args, skip_value=_is_step_ref)
        if problem:
            return verdict(False, f"step {i}: {problem}")
    where = job.get("backend")
    if where is None:
        return verdict(True, "schema checked; no back-end to run")
    try:
        backend = getattr(importlib.import_module(where["module"]), where["attr"])()
    except Exception as exc:
        return verdict(False, f"could not rebuild back-end {where}: {exc}")
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


def main() -> None:
    try:
        result = check_chain(json.loads(sys.stdin.buffer.read().decode("utf-8")))
    except Exception as exc:
        result = verdict(False, f"sandbox error: {type(exc).__name__}: {exc}")
    sys.stdout.buffer.write(json.dumps(result).encode("utf-8"))
    sys.stdout.buffer.flush()


# -- parent side ---------------------------------------------------------------------------

BOOTSTRAP = """\
import resource, sys
mem, cpu = int(sys.argv[1]), int(sys.argv[2])
resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu))
resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 20, 1 << 20))
sys.path[:0] = sys.argv[3:]
from memorepair.operators.sandbox import main
main()
"""


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


def run_chain(
    job: Mapping[str, Any], *, timeout_s: float, memory_mb: int, extra_path: list[str]
) -> dict[str, Any]:
    """Run ``check_chain`` on ``job`` in a limited child process; returns the verdict."""
    package_root = import_root("memorepair.operators.sandbox")
    path = [p for p in [package_root, *extra_path] if p]
    cpu = max(1, int(timeout_s) + 1)
    argv = [sys.executable, "-I", "-B", "-c", BOOTSTRAP, str(memory_mb << 20), str(cpu), *path]
    proc = subprocess.Popen(
        argv,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={"LC_ALL": "C.UTF-8"},
        cwd="/",
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(json.dumps(job).encode("utf-8"), timeout=timeout_s)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        return verdict(False, f"timed out after {timeout_s:g}s (killed)")
    try:
        result: dict[str, Any] = json.loads(out.decode("utf-8"))
    except ValueError:
        tail = err.decode("utf-8", "replace").strip().splitlines()[-1:] or [""]
        return verdict(False, f"sandbox exited with status {proc.returncode}: {tail[0]}")
    return result


if __name__ == "__main__":
    main()
