"""BFCL back-end adapters: ground-truth calls run, migrated back-ends change the API."""

from __future__ import annotations

import importlib

import pytest

pytest.importorskip(
    "bfcl_eval", reason="bench extra not installed (pip install --no-deps bfcl-eval)"
)
pytest.importorskip("mpmath", reason="bench extra not installed (mpmath, used by MathAPI)")

from bench.bfcl import classes
from bench.bfcl.backends import (
    BfclBackend,
    MigratedBackend,
    Migration,
    ToolCallError,
    interface_from_docs,
    migrate_interface,
    rewrite_call,
)
from bench.bfcl.builder import make_backends
from bench.bfcl.classes import backend_class, migrated_class
from bench.bfcl.data import TOOL_DOCS, load_tasks, select_tasks

from memorepair.operators.common import schema_dict
from memorepair.operators.sandbox import import_root, run_chain

FS_CONFIG = {
    "root": {
        "alex": {
            "type": "directory",
            "contents": {"notes.txt": {"type": "file", "content": "Error here. Fine there."}},
        }
    }
}


def fs() -> BfclBackend:
    return BfclBackend("GorillaFileSystem", {"t0": FS_CONFIG})


def test_interfaces_map_every_bfcl_type() -> None:
    for tool in TOOL_DOCS:
        iface = interface_from_docs(tool)
        assert iface.tool == tool and iface.functions
    assert interface_from_docs("MathAPI").functions["add"].params == {"a": "number", "b": "number"}


def test_calls_run_on_the_scenario_and_keep_state() -> None:
    state = {"scenario": "t0"}
    assert fs().call("ls", {}, state) == {"current_directory_content": ["notes.txt"]}
    out = fs().call("grep", {"file_name": "notes.txt", "pattern": "Error"}, state)
    assert out == {"matching_lines": ["Error here. Fine there."]}


def test_interface_violations_raise() -> None:
    with pytest.raises(ToolCallError, match="no function"):
        fs().call("rm_rf", {}, {})
    with pytest.raises(ToolCallError, match="missing"):
        fs().call("grep", {"file_name": "x"}, {})
    with pytest.raises(ToolCallError, match="must be integer"):
        fs().call("tail", {"file_name": "x", "lines": "3"}, {})


def test_ground_truth_chains_execute_without_interface_errors() -> None:
    tasks = select_tasks(load_tasks(), 24)
    backends = make_backends(tasks)
    for task in tasks:
        states: dict[str, dict[str, object]] = {}
        for _, _, call in task.calls():
            state = states.setdefault(call.tool, {"scenario": task.id})
            backends[call.tool].call(call.function, call.args, state)


def test_deterministic_outputs() -> None:
    backend = BfclBackend("TravelAPI")
    a = backend.call("get_budget_fiscal_year", {}, {})
    b = BfclBackend("TravelAPI").call("get_budget_fiscal_year", {}, {})
    assert a == b


def test_migrated_function_rename() -> None:
    m = Migration("GorillaFileSystem", "grep", new_function="search")
    new = MigratedBackend(fs(), m)
    assert "grep" not in new.schema().functions and new.schema().renames == {"grep": "search"}
    with pytest.raises(ToolCallError):
        new.call("grep", {"file_name": "notes.txt", "pattern": "Error"}, {"scenario": "t0"})
    state = {"scenario": "t0"}
    out = new.call("search", {"file_name": "notes.txt", "pattern": "Error"}, state)
    assert out == {"matching_lines": ["Error here. Fine there."]}
    assert new.call("ls", {}, state) == {"current_directory_content": ["notes.txt"]}


def test_migrated_param_rename_and_retype() -> None:
    m = Migration("GorillaFileSystem", "tail", param="lines", new_param="count", new_type="string")
    new = MigratedBackend(fs(), m)
    iface = new.schema()
    assert iface.functions["tail"].params["count"] == "string"
    assert iface.param_renames == {"tail": {"lines": "count"}}
    with pytest.raises(ToolCallError):
        new.call("tail", {"file_name": "notes.txt", "lines": 1}, {"scenario": "t0"})
    with pytest.raises(ToolCallError):
        new.call("tail", {"file_name": "notes.txt", "count": 1}, {"scenario": "t0"})
    out = new.call("tail", {"file_name": "notes.txt", "count": "1"}, {"scenario": "t0"})
    assert out == fs().call("tail", {"file_name": "notes.txt", "lines": 1}, {"scenario": "t0"})
    assert rewrite_call(iface, "tail", {"file_name": "n", "lines": 1}) == (
        "tail",
        {"file_name": "n", "count": "1"},
    )


def test_migration_errors_are_reported() -> None:
    iface = interface_from_docs("GorillaFileSystem")
    with pytest.raises(Exception, match="no function"):
        migrate_interface(iface, Migration("GorillaFileSystem", "nope", new_function="x"))
    with pytest.raises(Exception, match="already has"):
        migrate_interface(iface, Migration("GorillaFileSystem", "grep", new_function="ls"))
    with pytest.raises(Exception, match="unsupported retype"):
        migrate_interface(
            iface, Migration("GorillaFileSystem", "grep", param="pattern", new_type="integer")
        )


def test_zero_argument_classes_are_found_by_name_in_a_fresh_process() -> None:
    m = Migration("GorillaFileSystem", "tail", param="lines", new_param="count")
    for cls in (backend_class("GorillaFileSystem"), migrated_class(m)):
        assert getattr(importlib.import_module(cls.__module__), cls.__qualname__) is cls
    assert make_backends(select_tasks(load_tasks(), 2))["GorillaFileSystem"].name == (
        "GorillaFileSystem"
    )
    iface = migrate_interface(interface_from_docs("GorillaFileSystem"), m)
    job = {
        "chain": {"tool": "GorillaFileSystem", "steps": [{"function": "ls", "args": {}}]},
        "schema": schema_dict(iface),
        "backend": {"module": classes.__name__, "attr": migrated_class(m).__qualname__},
        "max_steps": 10,
    }
    root = import_root(classes.__name__)
    ok = run_chain(job, timeout_s=20, memory_mb=1024, extra_path=[root] if root else [])
    assert ok == {"ok": True, "reason": "", "steps_run": 1}
    stale = {
        **job,
        "chain": {
            "tool": "GorillaFileSystem",
            "steps": [{"function": "tail", "args": {"file_name": "x", "lines": 1}}],
        },
    }
    bad = run_chain(stale, timeout_s=20, memory_mb=1024, extra_path=[root] if root else [])
    assert not bad["ok"] and "unknown parameter" in bad["reason"]
