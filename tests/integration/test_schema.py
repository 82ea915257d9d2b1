"""What the schema guarantees (one served version per uid), and that writes need it."""

from __future__ import annotations

from pathlib import Path

import neo4j
import pytest
from reliability_support import run_cli

from memorepair.api import MemoryStore, open_store
from memorepair.errors import ConfigError
from memorepair.model import ArtifactIn, Kind, artifact_key


def constraint_names(memory: MemoryStore) -> set[str]:
    records = memory.store.driver.execute_query("SHOW CONSTRAINTS YIELD name").records
    return {str(r["name"]) for r in records}


@pytest.mark.serial
def test_apply_schema_drops_the_live_key_constraint_of_earlier_builds(memory: MemoryStore) -> None:
    memory.store.driver.execute_query(
        "CREATE CONSTRAINT live_key IF NOT EXISTS FOR (a:Live) REQUIRE a.key IS UNIQUE"
    )
    assert "live_key" in constraint_names(memory)
    memory.apply_schema()
    names = constraint_names(memory)
    assert "live_key" not in names
    assert "head_key" in names


def test_a_second_current_version_of_a_uid_is_refused(memory: MemoryStore) -> None:
    memory.import_items([ArtifactIn(uid="fact", kind=Kind.RECORD, content="v1")])
    with pytest.raises(neo4j.exceptions.ConstraintError):
        memory.store.driver.execute_query(
            "CREATE (:Artifact:Head:Live {key: $key, ns: $ns, vid: $key + '@2', version: 2})",
            key=artifact_key(memory.ns, "fact"),
            ns=memory.ns,
        )
    assert [a.version for a in memory.retrieve(uid="fact")] == [1]


def test_audit_check_reports_a_served_old_version(memory: MemoryStore) -> None:
    memory.import_items([ArtifactIn(uid="fact", kind=Kind.RECORD, content="v1")])
    assert memory.stale_served() == []
    memory.store.driver.execute_query(
        "CREATE (:Artifact:Live {key: $key, ns: $ns, uid: 'fact', vid: $key + '@0', version: 0})",
        key=artifact_key(memory.ns, "fact"),
        ns=memory.ns,
    )
    assert memory.stale_served() == [
        {
            "uid": "fact",
            "version": 0,
            "support": None,
            "support_version": None,
            "support_visibility": "not the current version",
        }
    ]
    checked = run_cli(memory.ns, "audit", "check")
    assert checked.returncode == 4, checked.stderr
    assert checked.stdout.strip() == "STALE fact@0 (not the current version)"


@pytest.mark.serial
def test_writes_refuse_a_database_whose_schema_was_never_applied(
    memory: MemoryStore, tmp_path: Path
) -> None:
    memory.import_items([ArtifactIn(uid="fact", kind=Kind.RECORD, content="v1")])
    memory.store.driver.execute_query("DROP CONSTRAINT head_key")
    try:
        # A new Store, as a new process would open: the check is made once per Store.
        with open_store(ns=memory.ns, settings=memory.settings) as fresh:
            hint = r"lacks MemoRepair's constraints \['head_key'\].*memorepair schema apply"
            with pytest.raises(ConfigError, match=hint):
                fresh.record({"uid": "other", "kind": "record", "content": "x"})
            with pytest.raises(ConfigError, match=hint):
                fresh.import_items([ArtifactIn(uid="other", kind=Kind.RECORD, content="x")])
            with pytest.raises(ConfigError, match=hint):
                fresh.repair({"id": "ev", "type": "delete", "roots": ["fact"]})
            assert fresh.counts()["live"] == 1  # nothing was written or withdrawn
            assert fresh.audit_events() == []
        event = tmp_path / "event.json"
        event.write_text('{"id": "ev", "type": "delete", "roots": ["fact"]}', encoding="utf-8")
        refused = run_cli(memory.ns, "repair", str(event))
        assert refused.returncode == 1
        assert "memorepair schema apply" in refused.stderr
    finally:
        memory.apply_schema()
    assert "head_key" in constraint_names(memory)
    with open_store(ns=memory.ns, settings=memory.settings) as fresh:
        assert fresh.repair({"id": "ev", "type": "delete", "roots": ["fact"]}).status == (
            "completed"
        )
