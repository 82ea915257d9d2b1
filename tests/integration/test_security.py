"""Security: parameterized named queries only, a fixed label allow-list, auth on by
default, a private password file, and namespaces that never touch each other.
"""

from __future__ import annotations

import ast
import re
import stat
from pathlib import Path

import pytest
from neo4j import GraphDatabase
from neo4j.exceptions import AuthError
from pydantic import SecretStr
from reliability_support import ROOT, SAMPLE, run_cli, sample_event, versions
from tests.unit.allow_list import LABELS, REL_TYPES

from memorepair import queries
from memorepair.api import MemoryStore, open_store
from memorepair.errors import ConfigError
from memorepair.local.server import LocalServer
from memorepair.settings import Settings

ENGINE = ROOT / "engine" / "memorepair"
#: Store and transaction methods whose first argument is a query.
QUERY_METHODS = {"read", "write", "autocommit", "run", "read_batches", "read_capped", "explain"}


#: What the engine calls the store and its transactions (`self` inside store.py).
STORES = {"store", "self.store", "memory.store", "tx", "self._tx", "session", "self.driver"}


def _calls(path: Path) -> list[tuple[int, str, ast.expr | None]]:
    found = []
    receivers = STORES | ({"self"} if path.name == "store.py" else set())
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if ast.unparse(node.func.value) not in receivers:
                continue
            first = node.args[0] if node.args else None
            found.append((node.lineno, node.func.attr, first))
    return found


def _named_calls(path: Path) -> list[tuple[int, ast.expr | None]]:
    """Each `queries.named(...)` call's first argument (the query file's name)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if (
            isinstance(node, ast.Call)
            and ast.unparse(node.func) in ("queries.named", "named")
            and path.name != "queries.py"
        ):
            found.append((node.lineno, node.args[0] if node.args else None))
    return found


def test_no_query_text_is_built_from_strings() -> None:
    """Queries reach the store only as module constants loaded from literal file names."""
    names = set(queries.all_names())
    driver_calls = 0
    for path in sorted(ENGINE.rglob("*.py")):
        rel = path.relative_to(ENGINE)
        for line, attr, first in _calls(path):
            where = f"{rel}:{line}"
            if attr in ("execute_query",) or (attr == "run" and path.name == "store.py"):
                # the driver only ever receives the text of a loaded query file
                driver_calls += 1
                assert path.name == "store.py", f"{where}: driver call outside the store"
                arg = ast.unparse(first) if first is not None else ""
                assert "_text(query)" in arg or arg == "text", where  # text: EXPLAIN below
                continue
            if attr in QUERY_METHODS and first is not None and path.name != "store.py":
                # a query object (a module constant, or a parameter typed `Query`), never text
                assert isinstance(first, ast.Name | ast.Attribute), f"{where}: {ast.unparse(first)}"
        for line, first in _named_calls(path):
            where = f"{rel}:{line}"
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                assert first.value in names, f"{where}: no cypher file {first.value!r}"
            else:  # the only non-literal name: the schema folder, read whole by the store
                assert rel.name == "store.py" and ast.unparse(first) == "n", where
    assert driver_calls >= 3
    store_src = (ENGINE / "store.py").read_text(encoding="utf-8")
    assert 'text = "EXPLAIN " + _text(query)' in store_src


def _strip(text: str) -> str:
    text = "\n".join(line for line in text.splitlines() if not line.strip().startswith("//"))
    return re.sub(r"'[^']*'", "''", text)


def test_labels_and_relationship_types_are_the_allow_list() -> None:
    labels: set[str] = set()
    rels: set[str] = set()
    root = Path(queries.load("store/heads").source).parts[0]
    assert root == "cypher"
    for name in queries.all_names():
        raw = (ROOT / "cypher" / f"{name}.cypher").read_text(encoding="utf-8")
        body = _strip(raw)
        assert "$(" not in body and "apoc." not in body.lower(), f"{name}: dynamic label"
        rels.update(re.findall(r"\[\w*:(\w+)", body))
        outside = re.sub(r"\[[^\]]*\]", "[]", body)
        labels.update(re.findall(r"(?:(?<=\w)|(?<=\())(?<!\s):([A-Za-z]\w*)", outside))
        for listed in re.findall(r"labels\(\w+\) WHERE \w+ IN \[([^\]]*)\]", raw):
            labels.update(re.findall(r"'(\w+)'", listed))
    assert labels == LABELS, labels ^ LABELS
    assert rels == REL_TYPES, rels ^ REL_TYPES


# ---- the local server ---------------------------------------------------------------------
@pytest.fixture
def local(neo4j_settings: Settings) -> LocalServer:
    if not neo4j_settings.uses_local_server or neo4j_settings.neo4j_password is not None:
        pytest.skip("needs the local server with its generated password")
    return LocalServer(neo4j_settings)


@pytest.mark.serial
def test_auth_is_on_by_default(local: LocalServer, neo4j_settings: Settings) -> None:
    assert Settings.model_fields["local_auth"].default is True
    conf = (local.conf_dir / "neo4j.conf").read_text(encoding="utf-8")
    assert "dbms.security.auth_enabled=true" in conf
    assert "server.default_listen_address=127.0.0.1" in conf
    uri = neo4j_settings.local_uri
    for auth in [None, ("neo4j", "not-the-password")]:
        with GraphDatabase.driver(uri, auth=auth) as driver, pytest.raises(AuthError):
            driver.verify_connectivity()
    wrong = neo4j_settings.model_copy(update={"neo4j_password": SecretStr("also-wrong")})
    with pytest.raises(ConfigError, match="refused the credentials") as caught:
        open_store(ns="sec", settings=wrong)
    assert "also-wrong" not in str(caught.value)


def test_password_file_is_private_and_never_logged(
    local: LocalServer, memory: MemoryStore, tmp_path: Path
) -> None:
    mode = stat.S_IMODE(local.password_file.stat().st_mode)
    assert mode == 0o600, oct(mode)
    password = local.password()
    assert len(password) >= 24
    memory.import_file(SAMPLE / "memory.jsonl")
    outputs = []
    for args in (
        ["neo4j", "status", "--json"],
        ["neo4j", "start"],
        ["status", "--json"],
        ["--debug", "retrieve", "--uid", "turn-01"],
        ["audit", "check"],
        ["repair", str(sample_event("delete", "sec-del", tmp_path))],
    ):
        done = run_cli(memory.ns, *args)
        assert done.returncode == 0, (args, done.stderr)
        outputs.append(done.stdout + done.stderr)
    assert all(password not in text for text in outputs)
    logs = list((local.home / "logs").glob("*"))
    assert logs
    for log in logs:
        assert password not in log.read_text(encoding="utf-8", errors="replace"), log


# ---- tenants ----------------------------------------------------------------------------------
def test_namespaces_are_isolated(
    memory: MemoryStore, neo4j_settings: Settings, tmp_path: Path
) -> None:
    other = open_store(ns=f"{memory.ns}-other", settings=neo4j_settings)
    try:
        memory.import_file(SAMPLE / "memory.jsonl")
        other.import_file(SAMPLE / "memory.jsonl")  # the same uids in another tenant
        before = other.counts()
        served_before = {a.uid: a.version for a in other.retrieve(limit=1000)}
        event = sample_event("delete", "iso", tmp_path)
        cascade = memory.plan(event).cascade
        assert memory.repair(event).status == "completed"
        other.record(
            {"uid": "other-late", "kind": "summary", "content": "x", "inputs": ["sum-zurich"]}
        )
        assert other.retrieve(uid="other-late")[0].version == 1  # live: its tenant is intact
        after = other.counts()
        assert after == {**before, "live": before["live"] + 1}
        assert {a.uid: a.version for a in other.retrieve(limit=1000)} == {
            **served_before,
            "other-late": 1,
        }
        for uid in cascade:
            assert versions(other, uid) == [(1, "Live")]
        assert other.audit_events() == []
        assert other.stale_served() == []
        with pytest.raises(Exception, match="names namespace"):
            other.repair({"id": "cross", "type": "delete", "roots": ["turn-01"], "ns": memory.ns})
        assert other.counts() == after
    finally:
        other.clear()
        other.close()
