"""Batches are all or none across crashes, against the real server and real processes.

A batch larger than one transaction (`MEMOREPAIR_IMPORT_TX_ITEMS`, set low here) is staged
under an import record and published in one final transaction. The fault hook
(`MEMOREPAIR_FAULT_PAUSE_AFTER`) holds a real `memorepair import` (or a Python process
calling `record_many`) at two points: after its first staged batch committed (`importing`)
and after the last one, before the publication (`imported`). The test SIGKILLs it, checks
that nothing of the batch is served on any read path, then completes the batch
(`memorepair resume`, or the same input run again) and checks that all of it is served,
exactly once, and that `audit check` holds.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from reliability_support import MEMORYREPAIR_BIN, ROOT, cli_env, run_cli

from memorepair.api import MemoryStore
from memorepair.errors import InputError
from memorepair.events import PAUSE_ENV
from memorepair.settings import Settings

RECORDS = 1500  # and as many summaries: 3,000 items, six staged batches of 500
BATCH = "500"
#: Batches of 500, and staged: one transaction would take the whole batch by default.
STAGED = {"MEMOREPAIR_BATCH_SIZE": BATCH, "MEMOREPAIR_IMPORT_TX_ITEMS": BATCH}
RECORD_MANY = """
import json, sys
from memorepair.api import open_store
items = [json.loads(line) for line in open(sys.argv[1], encoding="utf-8")]
for item in items:
    item.pop("type")
with open_store() as memory:
    report = memory.record_many(items, import_id=sys.argv[2])
print(json.dumps(report.as_dict()))
"""


def _items(base: str = "base") -> list[dict[str, Any]]:
    """Records, and summaries of two records each (one in another batch); every 100th
    summary also cites `base`, an artifact stored before the batch."""
    items: list[dict[str, Any]] = [
        {"type": "artifact", "uid": f"r-{i}", "kind": "record", "content": f"record {i}"}
        for i in range(RECORDS)
    ]
    for i in range(RECORDS):
        inputs = [f"r-{i}", f"r-{(i + 700) % RECORDS}"] + ([base] if i % 100 == 0 else [])
        items.append(
            {"type": "artifact", "uid": f"s-{i}", "kind": "summary", "content": f"sum {i}"}
            | {"inputs": inputs, "meta": {"n": i}}
        )
    return items


def _write(path: Path, items: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(i) + "\n" for i in items), encoding="utf-8")
    return path


def _batch_uids() -> list[str]:
    return [f"r-{i}" for i in range(RECORDS)] + [f"s-{i}" for i in range(RECORDS)]


def _start_paused(
    settings: Settings, ns: str, args: list[str], tag: str, point: str
) -> subprocess.Popen[str]:
    """Start a writer with the pause hook at `point` and wait for its marker."""
    marker = settings.state_dir.resolve() / f"fault-{tag}-{point}"
    marker.unlink(missing_ok=True)
    env = cli_env(ns, **{PAUSE_ENV: point, **STAGED})
    process = subprocess.Popen(
        args, env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    deadline = time.monotonic() + 300
    while not marker.exists():
        if process.poll() is not None:
            out, err = process.communicate()
            raise AssertionError(f"writer exited ({process.returncode}) before {point}: {out}{err}")
        if time.monotonic() > deadline:
            os.kill(process.pid, signal.SIGKILL)
            process.wait(timeout=30)
            raise AssertionError(f"no marker {marker}")
        time.sleep(0.05)
    assert marker.read_text(encoding="utf-8").strip() == str(process.pid)
    marker.unlink()
    return process


def _kill(process: subprocess.Popen[str]) -> None:
    if process.poll() is None:
        os.kill(process.pid, signal.SIGKILL)
    process.wait(timeout=30)
    assert process.returncode == -signal.SIGKILL


def _nothing_of_the_batch_served(memory: MemoryStore) -> None:
    """Every read path: uid reads, scans, search in each mode, lineage, export, counts."""
    assert memory.counts()["live"] == 1  # `base` alone
    assert memory.served(["r-0", "s-0", f"s-{RECORDS - 1}"]) == {}
    assert memory.retrieve(uid="s-0") == []
    assert [a.uid for a in memory.retrieve(limit=100)] == ["base"]
    assert [s.artifact.uid for s in memory.list_served(limit=100)] == ["base"]
    for mode in ("text", "vector", "hybrid"):
        hits = memory.search("record sum", k=20, mode=mode)
        assert all(h.uid == "base" for h in hits), mode
    assert memory.lineage("s-0", missing_ok=True) == []
    assert memory.stale_served() == []


def _all_of_the_batch_served(memory: MemoryStore) -> None:
    served = memory.served(_batch_uids())
    assert len(served) == 2 * RECORDS
    assert memory.counts()["live"] == 2 * RECORDS + 1
    assert [r["version"] for r in memory.lineage("s-0")] == [1]  # exactly once
    assert memory.retrieve(uid="s-7")[0].inputs == ["r-7", f"r-{707 % RECORDS}"]
    assert memory.resume_imports() == []  # nothing left open
    assert memory.stale_served() == []


def _audit_check_clean(ns: str) -> None:
    done = run_cli(ns, "audit", "check")
    assert done.returncode == 0 and done.stdout.startswith("ok"), done.stdout + done.stderr


@pytest.fixture
def based(memory: MemoryStore) -> MemoryStore:
    memory.record({"uid": "base", "kind": "record", "content": "the base fact"})
    return memory


# ---- memorepair import ------------------------------------------------------------------------
@pytest.mark.parametrize("point", ["importing", "imported"])
def test_import_killed_serves_nothing_then_completes(
    based: MemoryStore, neo4j_settings: Settings, tmp_path: Path, point: str
) -> None:
    path = _write(tmp_path / "batch.jsonl", _items())
    import_id = hashlib.sha256(path.read_bytes()).hexdigest()[:16]
    args = [str(MEMORYREPAIR_BIN), "import", str(path), "--quiet"]
    process = _start_paused(neo4j_settings, based.ns, args, import_id, point)
    _nothing_of_the_batch_served(based)  # held, alive
    _kill(process)
    _nothing_of_the_batch_served(based)  # after SIGKILL
    [open_import] = based.status()["open_imports"]
    assert (open_import["id"], open_import["count"]) == (import_id, 2 * RECORDS)
    assert open_import["written"] is (point == "imported")
    status = run_cli(based.ns, "status")
    assert f"open import {import_id}: " in status.stdout, status.stdout

    if point == "imported":  # every item staged: resume publishes
        done = run_cli(based.ns, "resume")
        assert done.returncode == 0, done.stderr
        assert f"import {import_id}: published (3000 of 3000 items staged" in done.stdout
    else:  # part staged: resume discards, the same file run again writes it whole
        done = run_cli(based.ns, "resume", "--import", import_id)
        assert done.returncode == 0, done.stderr
        assert f"import {import_id}: discarded" in done.stdout, done.stdout
        assert "run the same input again" in done.stdout
        _nothing_of_the_batch_served(based)
        again = run_cli(based.ns, "import", str(path), "--json", **STAGED)
        assert again.returncode == 0, again.stderr
        assert json.loads(again.stdout)["written"] == 2 * RECORDS
    _all_of_the_batch_served(based)
    _audit_check_clean(based.ns)

    # the same file once more: everything skipped, exit 0
    rerun = run_cli(based.ns, "import", str(path), **STAGED)
    assert rerun.returncode == 0, rerun.stderr
    assert "imported 0 artifacts" in rerun.stdout
    assert f"skipped {2 * RECORDS} stored already (identical)" in rerun.stdout
    _all_of_the_batch_served(based)


def test_import_killed_mid_write_then_the_same_file_again_completes(
    based: MemoryStore, neo4j_settings: Settings, tmp_path: Path
) -> None:
    path = _write(tmp_path / "batch.jsonl", _items())
    import_id = hashlib.sha256(path.read_bytes()).hexdigest()[:16]
    args = [str(MEMORYREPAIR_BIN), "import", str(path), "--quiet"]
    _kill(_start_paused(neo4j_settings, based.ns, args, import_id, "importing"))
    _nothing_of_the_batch_served(based)
    again = run_cli(based.ns, "import", str(path), **STAGED)
    assert again.returncode == 0, again.stderr
    assert "discarded" in again.stdout and "interrupted run" in again.stdout, again.stdout
    _all_of_the_batch_served(based)
    _audit_check_clean(based.ns)


# ---- record_many ----------------------------------------------------------------------------
@pytest.mark.parametrize("point", ["importing", "imported"])
def test_record_many_killed_serves_nothing_then_the_same_call_completes(
    based: MemoryStore, neo4j_settings: Settings, tmp_path: Path, point: str
) -> None:
    path = _write(tmp_path / "items.jsonl", _items())
    script = tmp_path / "record_many.py"
    script.write_text(RECORD_MANY, encoding="utf-8")
    args = [sys.executable, str(script), str(path), "rm-batch"]
    _kill(_start_paused(neo4j_settings, based.ns, args, "rm-batch", point))
    _nothing_of_the_batch_served(based)
    [open_import] = [r for r in _open(based) if r["id"] == "rm-batch"]
    assert open_import["written"] is (point == "imported")

    again = subprocess.run(
        args,
        env=cli_env(based.ns, **STAGED),
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert again.returncode == 0, again.stderr
    report = json.loads(again.stdout)
    assert report["written"] == 2 * RECORDS and report["discarded_interrupted"] > 0
    _all_of_the_batch_served(based)
    _audit_check_clean(based.ns)


def _open(memory: MemoryStore) -> list[dict[str, Any]]:
    from memorepair import importing

    return importing.open_imports(memory.store, memory.ns)


# ---- the barrier while an import is open ------------------------------------------------------
def test_delete_while_staged_withdraws_what_cites_it_at_publication(
    based: MemoryStore, neo4j_settings: Settings, tmp_path: Path
) -> None:
    """A staged version is not in any cascade (it is not served); at publication an input
    deleted meanwhile makes it withdrawn (`stale_input`, held by the deleting event), never
    served with stale support."""
    path = _write(tmp_path / "batch.jsonl", _items())
    import_id = hashlib.sha256(path.read_bytes()).hexdigest()[:16]
    args = [str(MEMORYREPAIR_BIN), "import", str(path), "--quiet"]
    process = _start_paused(neo4j_settings, based.ns, args, import_id, "imported")
    report = based.forget("base", reason="test")
    assert report.status == "completed" and report.withdrawn == 1  # the staged were not reached
    _kill(process)
    done = run_cli(based.ns, "resume", "--json")
    assert done.returncode == 0, done.stderr
    [resumed] = json.loads(done.stdout)["imports"]
    citing = RECORDS // 100
    assert (resumed["action"], resumed["live"], resumed["withdrawn"]) == (
        "published",
        2 * RECORDS - citing,
        citing,
    )
    assert based.served(["s-0", "s-100"]) == {}
    assert len(based.served(["s-1", "r-0"])) == 2
    [history] = based.lineage("s-100")
    assert history["visibility"] == "Withdrawn"
    assert history["withdrawn_by"] == [
        {"event": report.event, "outcome": "stale_input", "mode": None}
    ]
    _audit_check_clean(based.ns)


# ---- running a batch again: identical skipped, different refused ------------------------------
def test_rerun_skips_identical_and_refuses_different_items(based: MemoryStore) -> None:
    items = [{k: v for k, v in i.items() if k != "type"} for i in _items()[:10]]
    items += [{"uid": "pin", "kind": "summary", "content": "p", "inputs": ["base@1"]}]
    first = based.record_many(items)
    assert (first.written, first.skipped) == (11, 0)
    again = based.record_many([*items, {"uid": "new", "kind": "record", "content": "n"}])
    assert (again.written, again.skipped) == (1, 11)

    before = based.counts()
    changed = [dict(i) for i in items]
    changed[3] = {**changed[3], "content": "another text"}
    changed[5] = {**changed[5], "meta": {"x": 1}}
    with pytest.raises(InputError) as caught:
        based.record_many([*changed, {"uid": "newer", "kind": "record", "content": "n"}])
    message = str(caught.value)
    assert "item 4: artifact 'r-3' already exists and differs" in message
    assert "in content" in message and "item 6: artifact 'r-5'" in message and "meta" in message
    assert based.counts() == before and based.served(["newer"]) == {}

    based.update("base", content="the base fact, corrected")  # base@1 is not served now
    repinned = [*items[:-1], {**items[-1], "inputs": ["base@2"]}]
    with pytest.raises(InputError, match=r"'pin' already exists and differs .*pinned input"):
        based.record_many(repinned)
    assert based.record_many(items).skipped == 11  # pins still equal: identical


# ---- a staged import that copies erased text --------------------------------------------------
def test_a_staged_import_from_an_erased_version_stores_no_copy(
    memory: MemoryStore, tmp_path: Path
) -> None:
    """An import larger than one transaction (staged) whose items pin a version a delete
    erased, and copy its text: those items are stored redacted (no copy anywhere in the
    graph), named in the report, and `audit erasure` stays clean."""
    secret = "Ana's passport number is QX77121, issued in Bern"
    memory.record({"uid": "passport", "kind": "record", "content": secret})
    erased = memory.forget("passport", event_id="gdpr-before-import")
    assert erased.status == "completed"
    items = _items()[:600]  # two staged batches of 500
    copies = [
        {"type": "artifact", "uid": f"c-{i}", "kind": "summary", "content": f"{secret} ({i})"}
        | {"inputs": ["passport@1"]}
        for i in range(3)
    ]
    path = _write(tmp_path / "batch.jsonl", [*items, *copies])
    done = run_cli(memory.ns, "import", str(path), "--json", **STAGED)
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout)
    assert report["import"] is not None  # it was staged, then published
    assert sorted(r["uid"] for r in report["redacted"]) == ["c-0", "c-1", "c-2"]
    assert {r["event"] for r in report["redacted"]} == {"gdpr-before-import"}
    with memory.store.driver.session(database=memory.store.database) as session:
        rows = session.run(
            "MATCH (n) WHERE n.ns = $ns OPTIONAL MATCH (n)-[r]-() "
            "RETURN properties(n) AS node, collect(properties(r)) AS rels",
            ns=memory.ns,
        ).data()
    raw = json.dumps(rows, default=str, ensure_ascii=False).lower()
    assert "qx77121" not in raw and "issued in bern" not in raw
    assert memory.served(["c-0"]) == {}
    assert memory.audit_erasure("gdpr-before-import")["ok"]
    _audit_check_clean(memory.ns)
