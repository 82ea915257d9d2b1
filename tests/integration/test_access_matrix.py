"""Role x operation, over every surface: the Python API, the CLI, MCP over HTTP and the
LangGraph store. For each operation a principal holding every role but the one it needs
is refused, and nothing in the namespace changes (no artifact, event, use or exposure
record, no grant); a principal holding just that role is served. Set
SHARING_MATRIX_OUT=<file> to collect the matrix as JSON lines (the closing note's table).
"""

from __future__ import annotations

import io
import json
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from sharing_support import Server, census, running, settled, text_of
from tests.servers import free_port
from tests.unit.jwt_issuer import Issuer

from memorepair.access import ROLES
from memorepair.api import MemoryStore, Principal
from memorepair.cli import cli
from memorepair.errors import AccessDeniedError
from memorepair.settings import Settings

#: The roles a denial is tried with: all of them but the one an operation needs (admin
#: implies every role, so it is never among them).
BASE = ("reader", "writer", "curator", "auditor")
SCHEMA_V1 = {"get_weather": {"type": "object", "properties": {"city": {"type": "string"}}}}
SCHEMA_V2 = {"get_weather": {"type": "object", "properties": {"place": {"type": "string"}}}}


@dataclass(frozen=True)
class Op:
    """One operation of a surface and what it needs: every clause, one role of each."""

    name: str
    needs: tuple[frozenset[str], ...]
    run: Callable[..., Any]

    def denied_with(self) -> list[list[str]]:
        """One grant per clause: every base role except that clause's."""
        return [[r for r in BASE if r not in clause] for clause in self.needs]

    def allowed_with(self) -> list[str]:
        chosen = {min(clause, key=ROLES.index) for clause in self.needs}
        return [r for r in ROLES if r in chosen]

    def label(self) -> str:
        return " and ".join("|".join(r for r in ROLES if r in c) for c in self.needs)


def need(*clauses: str) -> tuple[frozenset[str], ...]:
    return tuple(frozenset(c.split("|")) for c in clauses)


def _seed(owner: MemoryStore, prefix: str) -> str:
    """The namespace's memory: facts, a summary, targets each allowed change consumes,
    a tool interface and one finished event (for show, audit and exposure)."""
    owner.record({"uid": "r0", "kind": "record", "content": "The museum opens at 9."})
    owner.record({"uid": "notes/r1", "kind": "record", "content": "Tickets cost 12 EUR."})
    owner.record(
        {"uid": "s0", "kind": "summary", "content": "Museum at 9, 12 EUR.", "inputs": ["r0"]}
    )
    for target in ("update", "forget", "correct", "repair", "put", "delete"):
        uid = f"notes/{prefix}-{target}"
        owner.record({"uid": uid, "kind": "record", "content": f"target of {target}"})
    owner.record({"uid": "seed-gone", "kind": "record", "content": "Soon forgotten."})
    owner.record_interface("weather", SCHEMA_V1)
    owner.retrieve(uid="r0")  # a read on record before the event
    return owner.forget(["seed-gone"], event_id=f"{prefix}-seed").event


def _matrix(
    owner: MemoryStore,
    surface: str,
    ops: list[Op],
    attempt: Callable[[Op, str], tuple[bool, str]],
    settle: Callable[[], None],
) -> list[dict[str, Any]]:
    """Each op: refused without its role (nothing changed), served with it."""
    rows = []
    for op in ops:
        for n, roles in enumerate(op.denied_with()):
            name = _principal(f"{surface}-{op.name}-deny{n}")
            owner.set_grant(name, owner.ns, roles)
            settle()
            before = census(owner)
            served, message = attempt(op, name)
            settle()
            assert not served, (surface, op.name, roles, message)
            assert "may not" in message, (surface, op.name, message)
            assert census(owner) == before, (surface, op.name, "a refused call changed state")
            rows.append(_row(surface, op, roles, "refused, nothing written"))
        name = _principal(f"{surface}-{op.name}-allow")
        owner.set_grant(name, owner.ns, op.allowed_with())
        served, message = attempt(op, name)
        assert served, (surface, op.name, op.allowed_with(), message)
        rows.append(_row(surface, op, op.allowed_with(), "served"))
    _collect(rows)
    return rows


def _principal(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9-]+", "-", text)


def _row(surface: str, op: Op, roles: list[str], outcome: str) -> dict[str, Any]:
    return {
        "surface": surface,
        "op": op.name,
        "needs": op.label(),
        "roles": roles,
        "outcome": outcome,
    }


def _collect(rows: list[dict[str, Any]]) -> None:
    out = os.environ.get("SHARING_MATRIX_OUT")
    if out:
        with open(out, "a", encoding="utf-8") as handle:
            for row in rows:
                handle.write(json.dumps(row) + "\n")


# ---- the Python API --------------------------------------------------------------------------
def test_python_api_matrix(memory: MemoryStore) -> None:
    seed = _seed(memory, "api")
    ops = [
        Op("search", need("reader"), lambda m: m.search("museum", 3, mode="text")),
        Op("retrieve", need("reader"), lambda m: m.retrieve(uid="r0")),
        Op("served", need("reader"), lambda m: m.served(["r0"])),
        Op("export", need("reader"), lambda m: m.export_to(io.StringIO())),
        Op("lineage", need("reader|auditor"), lambda m: m.lineage("r0")),
        Op(
            "record",
            need("writer"),
            lambda m: m.record({"uid": "api-new", "kind": "record", "content": "x"}),
        ),
        Op(
            "record_many",
            need("writer"),
            lambda m: m.record_many([{"uid": "api-many", "kind": "record", "content": "x"}]),
        ),
        Op("update", need("writer"), lambda m: m.update("notes/api-update", content="changed")),
        Op("forget", need("curator"), lambda m: m.forget(["notes/api-forget"])),
        Op(
            "correct",
            need("curator"),
            lambda m: m.correct([{"uid": "notes/api-correct", "content": "fixed"}]),
        ),
        Op(
            "repair",
            need("curator"),
            lambda m: m.repair({"id": "api-del", "type": "delete", "roots": ["notes/api-repair"]}),
        ),
        Op("resume", need("curator"), lambda m: m.resume()),
        Op(
            "plan",
            need("auditor|curator"),
            lambda m: m.plan({"id": "p", "type": "delete", "roots": ["r0"]}),
        ),
        Op("status", need("auditor"), lambda m: m.status()),
        Op("audit_events", need("auditor"), lambda m: m.audit_events()),
        Op("audit_event", need("auditor"), lambda m: m.audit_event(seed)),
        Op("show", need("auditor"), lambda m: m.show(seed)),
        Op("exposure", need("auditor"), lambda m: m.exposure(seed)),
        Op("set_grant", need("admin"), lambda m: m.set_grant("someone", m.ns, ["reader"])),
        Op("clear", need("admin"), lambda m: m.clear()),  # last: it empties the namespace
    ]

    def attempt(op: Op, name: str) -> tuple[bool, str]:
        try:
            op.run(memory.acting_as(Principal(name)))
        except AccessDeniedError as exc:
            return False, str(exc)
        return True, ""

    rows = _matrix(memory, "python-api", ops, attempt, memory.flush_use)
    assert len(rows) == sum(len(op.needs) + 1 for op in ops)


# ---- the CLI -----------------------------------------------------------------------------------
def test_cli_matrix(memory: MemoryStore, tmp_path: Path) -> None:
    seed = _seed(memory, "cli")
    events = {}
    for name, spec in {
        "delete": {"id": "cli-del", "type": "delete", "roots": ["notes/cli-repair"]},
        "plan": {"id": "cli-plan", "type": "delete", "roots": ["r0"]},
    }.items():
        events[name] = tmp_path / f"{name}.json"
        events[name].write_text(json.dumps(spec))
    line = tmp_path / "memory.jsonl"
    line.write_text(json.dumps({"uid": "cli-imported", "kind": "record", "content": "x"}) + "\n")
    record = json.dumps({"uid": "cli-new", "kind": "record", "content": "x"})
    ops = [
        Op("search", need("reader"), lambda: ["search", "museum", "--mode", "text", "--json"]),
        Op("retrieve", need("reader"), lambda: ["retrieve", "--uid", "r0", "--json"]),
        Op("export", need("reader"), lambda: ["export", "-"]),
        Op("audit lineage", need("reader|auditor"), lambda: ["audit", "lineage", "r0", "--json"]),
        Op("record", need("writer"), lambda: ["record", "-", "--json"]),
        Op("import", need("writer"), lambda: ["import", str(line), "--json"]),
        Op(
            "update",
            need("writer"),
            lambda: ["update", "notes/cli-update", "--content", "y", "--json"],
        ),
        Op("repair", need("curator"), lambda: ["repair", str(events["delete"]), "--json"]),
        Op("resume", need("curator"), lambda: ["resume", "--json"]),
        Op("plan", need("auditor|curator"), lambda: ["plan", str(events["plan"]), "--json"]),
        Op("status", need("auditor"), lambda: ["status", "--json"]),
        Op("audit events", need("auditor"), lambda: ["audit", "events", "--json"]),
        Op("audit event", need("auditor"), lambda: ["audit", "event", seed, "--json"]),
        Op("audit check", need("auditor"), lambda: ["audit", "check", "--json"]),
        Op("show", need("auditor"), lambda: ["show", seed, "--json"]),
        Op("audit exposure", need("auditor"), lambda: ["audit", "exposure", seed, "--json"]),
        Op("grants set", need("admin"), lambda: ["grants", "set", "x", memory.ns, "reader"]),
    ]

    def attempt(op: Op, name: str) -> tuple[bool, str]:
        args = ["--ns", memory.ns, "--principal", name, *op.run()]
        result = CliRunner().invoke(cli, args, input=record, standalone_mode=False)
        if isinstance(result.exception, AccessDeniedError):
            return False, str(result.exception)
        assert result.exception is None, (op.name, result.output, result.exception)
        return True, ""

    _matrix(memory, "cli", ops, attempt, lambda: None)
    # and as an operator sees it: one line, exit 6, nothing else
    import subprocess

    from sharing_support import command

    done = subprocess.run(
        [command(), "--ns", memory.ns, "--principal", "cli-search-deny0", "search", "museum"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 6 and done.stdout == ""
    assert done.stderr.startswith("error: principal 'cli-search-deny0' may not search")


# ---- MCP over HTTP -------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def mcp(
    neo4j_settings: Settings, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Server, Issuer]]:
    port = free_port()
    folder = tmp_path_factory.mktemp("matrix")
    with (
        Issuer(f"http://127.0.0.1:{port}/mcp") as issuer,
        running(issuer.url, issuer.jwks_url, folder / "principals.json", port) as server,
    ):
        yield server, issuer


def test_mcp_http_matrix(memory: MemoryStore, mcp: tuple[Server, Issuer]) -> None:
    server, issuer = mcp
    seed = _seed(memory, "mcp")
    ops = [
        Op("memory_search", need("reader"), lambda: {"query": "museum", "k": 3, "mode": "text"}),
        Op("memory_get", need("reader"), lambda: {"uid": "r0"}),
        Op("memory_lineage", need("reader|auditor"), lambda: {"uid": "r0"}),
        Op("memory_record", need("writer"), lambda: {"uid": "mcp-new", "content": "x"}),
        Op("tool_register", need("writer"), lambda: {"tool": "clock", "schema": SCHEMA_V1}),
        Op("memory_update", need("writer"), lambda: {"uid": "notes/mcp-update", "content": "y"}),
        Op("memory_forget", need("curator"), lambda: {"uids": ["notes/mcp-forget"]}),
        Op(
            "memory_correct",
            need("curator"),
            lambda: {"corrections": [{"uid": "notes/mcp-correct", "content": "z"}]},
        ),
        Op(
            "tool_migrated",
            need("curator"),
            lambda: {
                "tool": "weather",
                "new_schema": SCHEMA_V2,
                "renames": {},
                "param_renames": {"get_weather": {"city": "place"}},
                "dry_run": True,
            },
        ),
        Op("repair_plan", need("auditor|curator"), lambda: {"forget": ["r0"]}),
        Op("repair_status", need("auditor"), lambda: {}),
        Op("audit_check", need("auditor"), lambda: {}),
        Op("audit_exposure", need("auditor"), lambda: {"event_id": seed}),
    ]

    def attempt(op: Op, name: str) -> tuple[bool, str]:
        result = server.call(issuer.token(name), op.name, namespace=memory.ns, **op.run())
        return not result.isError, text_of(result)

    _matrix(memory, "mcp-http", ops, attempt, lambda: settled(memory))


# ---- the LangGraph store -------------------------------------------------------------------------
def test_langgraph_store_matrix(memory: MemoryStore) -> None:
    from memorepair.integrations.langgraph import MemoRepairStore

    _seed(memory, "lg")
    ns = ("notes",)
    ops = [
        Op("get", need("reader"), lambda s: s.get(ns, "r1")),
        Op("search", need("reader"), lambda s: s.search(ns, query="tickets")),
        Op("list_namespaces", need("reader"), lambda s: s.list_namespaces()),
        Op("put (new)", need("reader", "writer"), lambda s: s.put(ns, "lg-new", {"content": "x"})),
        Op(
            "put (change)",
            need("reader", "writer"),
            lambda s: s.put(ns, "lg-put", {"content": "y"}),
        ),
        Op("delete", need("reader|auditor", "curator"), lambda s: s.delete(ns, "lg-delete")),
    ]

    def attempt(op: Op, name: str) -> tuple[bool, str]:
        try:
            op.run(MemoRepairStore(memory.acting_as(Principal(name, "jwt"))))
        except AccessDeniedError as exc:
            return False, str(exc)
        return True, ""

    _matrix(memory, "langgraph", ops, attempt, memory.flush_use)
    assert memory.served(["notes/lg-new"]) and memory.served(["notes/lg-delete"]) == {}
