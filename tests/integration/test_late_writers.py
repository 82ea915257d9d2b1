"""Erasure reaches late writers, on the real Neo4j: an agent that read a version (`uid@N`)
which a delete erases, and records what it derived from it before, while or after the
delete runs, leaves no copy of the erased text anywhere, and is told why."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from langgraph.store.base import PutOp
from mcp import ClientSession
from reliability_support import run_cli, write_event
from test_mcp import call, with_server

from memorepair import erasure
from memorepair.api import MemoryStore, open_store
from memorepair.errors import InputError
from memorepair.integrations.langgraph import MemoRepairStore
from memorepair.settings import Settings

SECRET = "Passport QX77121 was issued to Mara Lind in Tromso on the third of March"
#: Words of SECRET that nothing else in these memories says: none may be found afterwards.
NEEDLES = ("qx77121", "mara lind", "tromso")


def raw_scan(memory: MemoryStore) -> dict[str, list[str]]:
    """Every property of every node and relationship of the namespace (not the engine's
    own scan): which needles each element still carries, by its vid or key."""
    with memory.store.driver.session(database=memory.store.database) as session:
        rows = session.run(
            "MATCH (n) WHERE n.ns = $ns OPTIONAL MATCH (n)-[r]-() "
            "RETURN coalesce(n.vid, n.key, elementId(n)) AS id, properties(n) AS node, "
            "collect(properties(r)) AS rels",
            ns=memory.ns,
        ).data()
    found: dict[str, list[str]] = {}
    for row in rows:
        text = json.dumps([row["node"], row["rels"]], default=str, ensure_ascii=False).lower()
        hits = [n for n in NEEDLES if n in text]
        if hits:
            found[row["id"]] = hits
    return found


def versions(memory: MemoryStore, prefix: str) -> dict[str, dict[str, Any]]:
    """The stored versions whose uid starts with `prefix`, by uid (erasure facts only)."""
    with memory.store.driver.session(database=memory.store.database) as session:
        rows = session.run(
            "MATCH (a:Artifact {ns: $ns}) WHERE a.uid STARTS WITH $prefix "
            "RETURN a.uid AS uid, a.erased_by AS erased_by, a.erased_sha256 AS sha256, "
            "a.content AS content, a.meta AS meta, a.outcome AS outcome, a:Live AS live, "
            "a.inputs AS inputs",
            ns=memory.ns,
            prefix=prefix,
        ).data()
    return {r["uid"]: r for r in rows}


def late(uid: str, pin: str = "passport@1") -> dict[str, Any]:
    """A write derived from what the agent read: it copies the text, in content and meta."""
    return {
        "uid": uid,
        "kind": "summary",
        "content": f"- {SECRET} [{pin}]",
        "meta": {"desk": "front office", "copied": SECRET},
        "inputs": [pin],
    }


def passport_memory(memory: MemoryStore) -> None:
    memory.record({"uid": "passport", "kind": "record", "content": SECRET})
    memory.record({"uid": "trip", "kind": "record", "content": "Ana travels to Oslo in May."})
    memory.record(
        {
            "uid": "digest",
            "kind": "summary",
            "content": f"- {SECRET} [passport@v1]\n- Ana travels to Oslo in May. [trip@v1]",
            "inputs": ["passport@1", "trip"],
        }
    )


def assert_clean(memory: MemoryStore, event_id: str) -> dict[str, Any]:
    assert raw_scan(memory) == {}
    proof = memory.audit_erasure(event_id)
    assert proof["ok"] and proof["copies"] == []
    return proof


@pytest.fixture
def second(memory: MemoryStore, neo4j_settings: Settings) -> Iterator[MemoryStore]:
    """Another client of the same namespace (a second agent process, say)."""
    other = open_store(ns=memory.ns, settings=neo4j_settings)
    try:
        yield other
    finally:
        other.close()


# ---- after the delete completed ---------------------------------------------------------------
def test_a_write_pinning_a_deleted_version_after_the_delete_is_redacted_and_told_why(
    memory: MemoryStore,
) -> None:
    passport_memory(memory)
    report = memory.forget("passport", event_id="gdpr-1")
    assert report.status == "completed" and report.erasure is not None
    assert report.erasure["ok"]

    row = memory.record(late("late-after"))

    assert row["live"] is False and row["held_by"] == f"{memory.ns}/gdpr-1"
    assert row["redacted"] == {
        "input": "passport@1",
        "event": "gdpr-1",
        "reason": row["redacted"]["reason"],
    }
    assert "passport@1 is erased by event 'gdpr-1'" in row["redacted"]["reason"]
    stored = versions(memory, "late-after")["late-after"]
    assert stored["content"] is None and stored["erased_by"] == f"{memory.ns}/gdpr-1"
    assert len(stored["sha256"]) == 64 and stored["outcome"] == "stale_input"
    # the event's fingerprints judge the meta: what does not quote the text stays
    assert json.loads(stored["meta"]) == {"desk": "front office"}
    assert stored["inputs"] == ["passport"]  # lineage is structure: it stays
    proof = assert_clean(memory, "gdpr-1")
    assert proof["late_write_count"] == 1
    assert proof["late_writes"] == [{"vid": f"{memory.ns}/late-after@1", "outcome": "stale_input"}]
    assert memory.retrieve(uid="late-after") == []
    hits = memory.search("Mara Lind passport QX77121", k=10)
    assert all(h.uid != "late-after" and "qx77121" not in h.content.lower() for h in hits)


def test_refuse_names_the_erased_input_and_writes_nothing(memory: MemoryStore) -> None:
    passport_memory(memory)
    memory.forget("passport", event_id="gdpr-1")
    with pytest.raises(
        InputError,
        match=r"passport@1 is not served any more \(removed by event 'gdpr-1'\)",
    ):
        memory.record(late("refused"), on_stale="refuse")
    assert versions(memory, "refused") == {}
    assert_clean(memory, "gdpr-1")


# ---- during the delete, at each of its steps --------------------------------------------------
def test_writes_at_every_step_of_a_delete_are_redacted_or_erased_with_it(
    memory: MemoryStore, second: MemoryStore
) -> None:
    """A write at each step the delete reports (its progress hook runs between steps):
    the one before the barrier is served and then withdrawn and erased with the cascade;
    every later one is recorded redacted and says so. A refusing writer is refused."""
    passport_memory(memory)
    answers: dict[str, dict[str, Any]] = {}
    refusals: dict[str, str] = {}

    def during(step: str, done: int, total: int) -> None:
        if done or step in answers:
            return
        answers[step] = second.record(late(f"w-{step}"))
        try:
            second.record(late(f"r-{step}"), on_stale="refuse")
        except InputError as error:
            refusals[step] = str(error)

    report = memory.forget("passport", event_id="gdpr-2", progress=during)

    assert report.status == "completed" and report.erasure and report.erasure["ok"]
    assert {"barrier", "execution", "publication", "erasure"} <= set(answers)
    served = [step for step, row in answers.items() if row["live"]]
    assert served == ["barrier"]  # its progress line comes before the barrier commits
    for step, row in answers.items():
        if step != "barrier":
            assert row["redacted"] is not None, step
            assert row["redacted"]["input"] == "passport@1"
            assert row["redacted"]["event"] == "gdpr-2"
            assert "passport@1" in refusals[step] and "gdpr-2" in refusals[step]
    stored = versions(memory, "w-")
    assert set(stored) == {f"w-{step}" for step in answers}
    assert {v["erased_by"] for v in stored.values()} == {f"{memory.ns}/gdpr-2"}
    assert all(v["content"] is None and not v["live"] for v in stored.values())
    assert set(versions(memory, "r-")) == {"r-barrier"}  # refused ones wrote nothing
    late_writes = len(answers) - 1  # recorded withdrawn at once (the barrier's was served)
    assert report.erasure["erased_late_writes"] == late_writes
    proof = assert_clean(memory, "gdpr-2")
    assert proof["late_write_count"] == late_writes


def test_a_stale_pin_superseded_before_the_delete_is_redacted_while_it_runs(
    memory: MemoryStore, second: MemoryStore
) -> None:
    """passport@1 was corrected (without erase) before the delete: a writer still holding
    it is stale because of the correction, and is redacted because the delete erases
    every version of its root, the old one too."""
    passport_memory(memory)
    memory.update("passport", content=f"{SECRET}, renewed in 2031", reason="renewal")
    before = memory.record(late("stale-before"))
    assert before["live"] is False and before["redacted"] is None  # nothing erased yet
    answers: list[dict[str, Any]] = []

    def during(step: str, done: int, total: int) -> None:
        if step == "candidates" and not answers:
            answers.append(second.record(late("stale-during")))

    memory.forget("passport", event_id="gdpr-3", progress=during)

    assert answers[0]["redacted"]["event"] == "gdpr-3"
    stored = versions(memory, "stale-")
    assert {v["erased_by"] for v in stored.values()} == {f"{memory.ns}/gdpr-3"}
    assert_clean(memory, "gdpr-3")


def test_a_version_derived_while_the_erasure_redacts_is_reached_before_it_completes(
    memory: MemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A version that commits between the erasure's read of its reach and its redaction
    (written here directly, as a writer that committed just before the erased marker)
    is found by the erasure's next read of the reach: the event completes clean."""
    passport_memory(memory)
    redacted = erasure.redacted
    injected: list[str] = []

    def inject_once(row: dict[str, Any], matcher: Any) -> dict[str, Any]:
        if not injected:
            injected.append(_derived_directly(memory, "sneaked", "passport@1"))
        return redacted(row, matcher)

    monkeypatch.setattr(erasure, "redacted", inject_once)
    report = memory.forget("passport", event_id="gdpr-4")

    assert injected and report.status == "completed"
    assert report.erasure is not None and report.erasure["ok"]
    assert versions(memory, "sneaked")["sneaked"]["erased_by"] == f"{memory.ns}/gdpr-4"
    assert_clean(memory, "gdpr-4")


def _derived_directly(memory: MemoryStore, uid: str, pin: str) -> str:
    """A withdrawn version derived from `pin`, quoting the secret, committed at once."""
    ns = memory.ns
    with memory.store.driver.session(database=memory.store.database) as session:
        session.run(
            "MATCH (i:Artifact {vid: $input}) "
            "CREATE (a:Artifact:Head:Withdrawn {vid: $vid, key: $key, ns: $ns, uid: $uid, "
            "version: 1, kind: 'summary', content: $content, inputs: [$input_uid], "
            "outcome: 'stale_input', created_at: datetime()}) "
            "CREATE (i)-[:INFLUENCES {pos: 0}]->(a)",
            input=f"{ns}/{pin}",
            vid=f"{ns}/{uid}@1",
            key=f"{ns}/{uid}",
            ns=ns,
            uid=uid,
            content=SECRET,
            input_uid=pin.split("@")[0],
        ).consume()
    return uid


# ---- racing writers ---------------------------------------------------------------------------
def test_writers_racing_a_delete_leave_no_copy_and_each_gets_an_answer(
    memory: MemoryStore, neo4j_settings: Settings
) -> None:
    """Three agents keep recording from passport@1 while it is deleted, and a few times
    after: whatever the interleaving, every write is served before the barrier (then
    erased with the cascade) or recorded redacted with its reason; none fails, and no copy
    is left."""
    passport_memory(memory)
    finished = threading.Event()
    answers: list[dict[str, Any]] = []
    errors: list[BaseException] = []

    def agent(name: str) -> None:
        with open_store(ns=memory.ns, settings=neo4j_settings) as mine:
            n, after = 0, 0
            while after < 3:
                after += finished.is_set()
                answers.append(mine.record(late(f"a-{name}-{n}")))
                n += 1

    threads = [threading.Thread(target=_catching(agent, errors), args=(n,)) for n in "xyz"]
    for thread in threads:
        thread.start()
    try:
        report = memory.forget("passport", event_id="gdpr-5")
    finally:
        finished.set()
        for thread in threads:
            thread.join()

    assert errors == []
    assert report.status == "completed" and report.erasure and report.erasure["ok"]
    for row in answers:
        assert row["live"] or (row["redacted"] and row["redacted"]["event"] == "gdpr-5"), row
    stored = versions(memory, "a-")
    assert len(stored) == len(answers) >= 9
    assert {v["erased_by"] for v in stored.values()} == {f"{memory.ns}/gdpr-5"}
    assert not any(v["live"] or v["content"] for v in stored.values())
    assert_clean(memory, "gdpr-5")


def _catching(work: Callable[[str], None], errors: list[BaseException]) -> Callable[[str], None]:
    def run(name: str) -> None:
        try:
            work(name)
        except BaseException as error:  # the test reports every one
            errors.append(error)

    return run


# ---- batches, corrections, surfaces -----------------------------------------------------------
def test_record_many_redacts_items_from_an_erased_version_and_what_derives_from_them(
    memory: MemoryStore,
) -> None:
    passport_memory(memory)
    memory.forget("passport", event_id="gdpr-6")
    chained = {
        "uid": "b-chained",
        "kind": "summary",
        "content": f"Again: {SECRET}",
        "inputs": ["b-copy"],
    }
    plain = {"uid": "b-plain", "kind": "record", "content": "Ana likes tea."}
    report = memory.record_many([late("b-copy"), chained, plain])

    assert report.written == 3 and report.live == 1
    assert [(r["uid"], r["input"], r["event"]) for r in report.redacted] == [
        ("b-copy", "passport@1", "gdpr-6"),
        ("b-chained", "passport@1", "gdpr-6"),
    ]
    assert report.as_dict()["redacted"] == report.redacted
    assert [a.uid for a in memory.retrieve(uid="b-plain")] == ["b-plain"]
    with pytest.raises(InputError, match="passport@1"):
        memory.record_many([late("b-refused"), {**plain, "uid": "b-plain-2"}], on_stale="refuse")
    assert versions(memory, "b-refused") == {} and versions(memory, "b-plain-2") == {}
    proof = assert_clean(memory, "gdpr-6")
    assert proof["late_write_count"] == 2


def test_a_correct_with_erase_redacts_writes_from_the_old_version_only(
    memory: MemoryStore,
) -> None:
    passport_memory(memory)
    memory.repair(
        {
            "id": "fix-passport",
            "type": "correct",
            "roots": ["passport"],
            "erase": True,
            "replacements": [{"replaces": "passport", "content": "Passport on file (renewed)."}],
        }
    )
    old = memory.record(late("from-old"))
    new = memory.record(
        {"uid": "from-new", "kind": "summary", "content": "Renewed.", "inputs": ["passport@2"]}
    )
    assert old["redacted"] and old["redacted"]["event"] == "fix-passport"
    assert new["live"] is True and new["redacted"] is None
    assert_clean(memory, "fix-passport")


def test_cli_record_and_audit_erasure_say_what_was_redacted(
    memory: MemoryStore, tmp_path: Path
) -> None:
    passport_memory(memory)
    deleted = run_cli(
        memory.ns,
        "repair",
        str(write_event(tmp_path, {"id": "gdpr-7", "type": "delete", "roots": ["passport"]})),
    )
    assert deleted.returncode == 0, deleted.stderr
    line = tmp_path / "late.json"
    line.write_text(json.dumps(late("cli-late")), encoding="utf-8")
    recorded = run_cli(memory.ns, "record", str(line))
    assert recorded.returncode == 0, recorded.stderr
    assert "withdrawn" in recorded.stdout and "text redacted" in recorded.stdout
    assert "passport@1 is erased by event 'gdpr-7'" in recorded.stdout
    line.write_text(json.dumps(late("cli-refused")), encoding="utf-8")
    refused = run_cli(memory.ns, "record", "--on-stale", "refuse", str(line))
    assert refused.returncode == 2
    assert "passport@1 is not served any more (removed by event 'gdpr-7')" in refused.stderr
    assert versions(memory, "cli-refused") == {}
    memory_file = tmp_path / "import.jsonl"
    memory_file.write_text(json.dumps({"type": "artifact", **late("cli-import")}) + "\n")
    imported = run_cli(memory.ns, "import", str(memory_file))
    assert imported.returncode == 0, imported.stderr
    assert "1 of them redacted" in imported.stdout
    assert "cli-import: input passport@1 erased by event gdpr-7" in imported.stdout
    audit = run_cli(memory.ns, "audit", "erasure", "gdpr-7")
    assert audit.returncode == 0, audit.stdout + audit.stderr
    assert "2 of them late writes" in audit.stdout and "no copy left" in audit.stdout
    assert raw_scan(memory) == {}


def test_a_langgraph_put_from_an_erased_item_is_refused_with_the_reason(
    memory: MemoryStore,
) -> None:
    store = MemoRepairStore(memory)
    store.put(("users", "ana"), "passport", {"content": SECRET})
    pinned = store.pin(("users", "ana"), "passport")
    store.delete(("users", "ana"), "passport")
    with pytest.raises(InputError, match=r"kept no value: input users/ana/passport@1 is erased"):
        store.batch([PutOp(("users", "ana"), "note", {"content": SECRET, "inputs": [pinned]})])
    assert store.get(("users", "ana"), "note") is None
    assert raw_scan(memory) == {}


def test_mcp_answers_a_redacted_record_and_an_open_erasure_plainly(memory: MemoryStore) -> None:
    """memory_record says the text was not stored and why; memory_forget whose erasure
    finds a copy it cannot reach (a note quoting the text) says the event is not complete."""
    passport_memory(memory)
    memory.record({"uid": "note", "kind": "record", "content": "Agent note: QX77121 on file."})

    async def work(session: ClientSession) -> dict[str, Any]:
        forget = await call(session, "memory_forget", uids=["passport"], event_id="gdpr-8")
        row = await call(
            session,
            "memory_record",
            uid="mcp-late",
            kind="summary",
            content=SECRET,
            inputs=["passport@1"],
        )
        return {"forget": forget, "record": row}

    out = with_server(memory, work)
    forget = out["forget"]
    assert forget["status"] == "open" and forget["complete"] is False
    assert "stays open" in forget["warning"] and f"{memory.ns}/note@1.content" in forget["warning"]
    assert forget["erasure"]["ok"] is False
    row = out["record"]
    assert row["served"] is False
    assert row["redacted"]["input"] == "passport@1" and row["redacted"]["event"] == "gdpr-8"
    assert versions(memory, "mcp-late")["mcp-late"]["content"] is None
    memory.forget("note", event_id="gdpr-note")
    assert [r.status for r in memory.resume("gdpr-8")] == ["completed"]
    assert raw_scan(memory) == {}
    assert memory.audit_erasure("gdpr-8")["late_write_count"] == 1
