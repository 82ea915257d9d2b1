"""The promise over memory's whole life, on the real Neo4j: pinned provenance, corrections
that keep lineage, updates, erasure that erases, retries, and retrieval edges that
survive repair."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from reliability_support import SAMPLE, run_cli, write_event

from memorepair import events
from memorepair.api import MemoryStore, open_store
from memorepair.errors import InputError, UnknownArtifactError
from memorepair.model import Artifact, ArtifactIn, Kind, Mode, RepairEventSpec
from memorepair.operators.base import RepairContext, Successor, Validation
from memorepair.operators.regen import RegenOperator
from memorepair.sample.tools import CurrencyBackend, CurrencyBackendV2
from memorepair.settings import Settings


def everything(memory: MemoryStore) -> str:
    """Every property of every node and relationship of the namespace, as one lower-case
    text (the test's own scan, independent of `audit erasure`)."""
    with memory.store.driver.session(database=memory.store.database) as session:
        rows = session.run(
            "MATCH (n) WHERE n.ns = $ns OPTIONAL MATCH (n)-[r]-() "
            "RETURN properties(n) AS node, collect(properties(r)) AS rels",
            ns=memory.ns,
        ).data()
    return json.dumps(rows, default=str, ensure_ascii=False).lower()


def served_text(memory: MemoryStore) -> str:
    return " ".join(a.content + json.dumps(a.meta) for a in memory.retrieve(limit=10_000)).lower()


# ---- corrections and pins ------------------------------------------------------------------
def policy_memory(memory: MemoryStore) -> None:
    memory.record({"uid": "policy", "kind": "record", "content": "Refunds within 14 days."})
    memory.record({"uid": "trip", "kind": "record", "content": "Ana travels in May."})
    memory.record(
        {
            "uid": "digest",
            "kind": "summary",
            "content": "- Refunds within 14 days. [policy@v1]\n- Ana travels in May. [trip@v1]",
            "inputs": ["policy", "trip"],
        }
    )


def test_a_corrected_summary_keeps_its_lineage(memory: MemoryStore) -> None:
    policy_memory(memory)
    memory.repair(
        {
            "id": "fix-digest",
            "type": "correct",
            "roots": ["digest"],
            "replacements": [{"replaces": "digest", "content": "- Ana travels in May. [trip@v1]"}],
        }
    )
    corrected = memory.lineage("digest")[-1]
    assert corrected["visibility"] == "Live" and sorted(corrected["inputs"]) == [
        "policy@1",
        "trip@1",
    ]
    report = memory.repair({"id": "forget-trip", "type": "delete", "roots": ["trip"]})
    assert report.withdrawn == 2  # the root and the corrected summary
    assert "digest" in report.published  # withdrawn, then rebuilt from the policy alone
    [served] = memory.retrieve(uid="digest")
    assert "may" not in served.content.lower()
    assert memory.stale_served() == []


def test_a_replacement_may_declare_pinned_inputs(memory: MemoryStore) -> None:
    policy_memory(memory)
    memory.repair(
        {
            "id": "fix-digest",
            "type": "correct",
            "roots": ["digest"],
            "replacements": [
                {"replaces": "digest", "content": "- Ana travels in May.", "inputs": ["trip@1"]}
            ],
        }
    )
    assert memory.lineage("digest")[-1]["inputs"] == ["trip@1"]
    stale = {
        "id": "fix-again",
        "type": "correct",
        "roots": ["digest"],
        "replacements": [{"replaces": "digest", "content": "x", "inputs": ["trip@7"]}],
    }
    with pytest.raises(InputError, match=r"input trip@7, which does not exist.*trip@1"):
        memory.repair(stale)
    assert memory.lineage("digest")[-1]["version"] == 2  # nothing changed


def test_a_pin_to_a_superseded_version_is_never_served(memory: MemoryStore) -> None:
    policy_memory(memory)
    memory.update("policy", content="Refunds within 30 days.", event_id="policy-v2")
    memory.update("policy", content="Refunds within 60 days.", event_id="policy-v3")
    assert [a.version for a in memory.retrieve(uid="policy")] == [3]
    written = memory.record(
        {"uid": "note", "kind": "summary", "content": "Refunds: 14 days.", "inputs": ["policy@1"]}
    )
    assert written["live"] is False and written["held_by"] == f"{memory.ns}/policy-v2"
    assert memory.retrieve(uid="note") == []
    assert [a["uid"] for a in memory.audit_event("policy-v2")["stale_input"]] == ["note"]
    with pytest.raises(InputError, match=r"policy@1 is not served any more.*policy@3"):
        memory.record(
            {"uid": "note2", "kind": "summary", "content": "x", "inputs": ["policy@1"]},
            on_stale="refuse",
        )
    with pytest.raises(UnknownArtifactError, match=r"policy@9 does not exist"):
        memory.record({"uid": "note3", "kind": "summary", "content": "x", "inputs": ["policy@9"]})
    fresh = memory.record(
        {"uid": "note4", "kind": "summary", "content": "Refunds: 60 days.", "inputs": ["policy@3"]}
    )
    assert fresh["live"] is True
    assert memory.stale_served() == []


def test_update_is_a_correct_event_with_its_cascade(memory: MemoryStore) -> None:
    policy_memory(memory)
    report = memory.update("trip", content="Ana travels in June.", reason="she moved it")
    assert report.type == "correct" and report.published == ["digest"]
    assert report.event.startswith("update-trip-")
    [digest] = memory.retrieve(uid="digest")
    assert "June" in digest.content and "May" not in digest.content
    assert memory.lineage("trip")[-1]["version"] == 2
    with pytest.raises(InputError, match="give content, meta or inputs"):
        memory.update("trip")
    with pytest.raises(UnknownArtifactError, match="no served version"):
        memory.update("nope", content="x")


def test_cli_update_and_record(memory: MemoryStore, tmp_path: Path) -> None:
    policy_memory(memory)
    done = run_cli(memory.ns, "update", "trip", "--content", "Ana travels in July.", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["outcomes"]["published"] == ["digest"]
    item = tmp_path / "item.json"
    item.write_text(json.dumps({"uid": "n", "kind": "record", "content": "hi"}), "utf-8")
    recorded = run_cli(memory.ns, "record", str(item), "--json")
    assert recorded.returncode == 0 and json.loads(recorded.stdout)["live"] is True
    again = run_cli(memory.ns, "record", str(item))
    assert again.returncode == 2 and "already exists" in again.stderr


# ---- erasure ------------------------------------------------------------------------------
PASSPORT = "Quote passport QX77812 when booking flights."


def passport_memory(memory: MemoryStore) -> None:
    memory.record({"uid": "id-doc", "kind": "record", "content": PASSPORT})
    memory.record({"uid": "pref", "kind": "record", "content": "Ana prefers aisle seats."})
    memory.record(
        {
            "uid": "booking-skill",
            "kind": "skill",
            "arch": "prompt",
            "content": "# Skill: Book flights\n- Quote passport QX77812 when booking flights. "
            "[id-doc@v1]\n- Ana prefers aisle seats. [pref@v1]",
            "meta": {"title": "Book flights", "instruction": PASSPORT},
            "inputs": ["id-doc", "pref"],
        }
    )
    memory.record(
        {
            "uid": "profile",
            "kind": "summary",
            "content": f"- {PASSPORT} [id-doc@v1]\n- Ana prefers aisle seats. [pref@v1]",
            "inputs": ["id-doc", "pref"],
        }
    )


def test_delete_erases_every_copy(memory: MemoryStore) -> None:
    passport_memory(memory)
    memory.update("id-doc", content="Quote passport QX77812 at check-in too.", event_id="fix-id")
    report = memory.repair({"id": "gdpr-1", "type": "delete", "roots": ["id-doc"]})
    assert report.status == "completed"
    assert sorted(report.published) == ["booking-skill", "profile"]
    graph = everything(memory)
    for fragment in ("qx77812", "quote passport", "at check-in too"):
        assert fragment not in graph, fragment
        assert fragment not in served_text(memory)
    [skill] = memory.retrieve(uid="booking-skill")
    assert skill.meta == {"title": "Book flights"}  # the quoting instruction is gone
    record = memory.audit_erasure("gdpr-1")
    assert record["ok"] and record["copies"] == []
    assert record["versions"] >= 6  # both id-doc versions and every derived old version
    assert {r.split("@")[0] for r in record["roots"]} == {f"{memory.ns}/id-doc"}
    # the hashes of what was erased are whole SHA-256 digests (64 hex digits)
    hashes = [r.rsplit(":", 1)[1] for r in record["roots"]] + [
        v["sha256"] for v in record["redacted"]
    ]
    assert hashes and all(re.fullmatch(r"[0-9a-f]{64}", h) for h in hashes), hashes
    [event] = [e for e in memory.audit_events() if e["event"] == "gdpr-1"]
    assert event["phase"] == "erased"


def test_lineage_lists_only_the_events_that_withdrew_a_version(memory: MemoryStore) -> None:
    policy_memory(memory)
    memory.update("trip", content="Ana travels in June.", event_id="trip-june")
    history = memory.lineage("digest")
    assert [row["withdrawn_by"] for row in history] == [
        [{"event": "trip-june", "outcome": "published", "mode": "regen"}],
        [],  # never withdrawn: no entry, not one of nulls
    ]
    assert [row["withdrawn_by"] for row in memory.lineage("policy")] == [[]]


def test_the_erasure_proof_finds_a_copy(memory: MemoryStore) -> None:
    passport_memory(memory)
    memory.repair({"id": "gdpr-2", "type": "delete", "roots": ["id-doc"]})
    memory.record({"uid": "leak", "kind": "record", "content": f"Agent note: {PASSPORT}"})
    record = memory.audit_erasure("gdpr-2")
    assert not record["ok"]
    assert [(c["where"], c["property"]) for c in record["copies"]] == [
        (f"{memory.ns}/leak@1", "content")
    ]
    memory.update("pref", content="Ana prefers window seats.", event_id="plain-fix")
    with pytest.raises(InputError, match="erased nothing"):
        memory.audit_erasure("plain-fix")


# ---- derived meta (a prompt skill, a summary, a cache) --------------------------------------
PASSPORT_RECORD = "Ana's passport number is QX77121, valid until 2031."


def derived_meta_memory(memory: MemoryStore) -> None:
    """A record with a passport number and three artifacts derived from it (a cache of
    the summary, replayed) whose meta quotes the number in words of their own: no phrase
    of the record's text, only its identifier."""
    memory.record({"uid": "passport", "kind": "record", "content": PASSPORT_RECORD})
    memory.record({"uid": "pref", "kind": "record", "content": "Ana prefers aisle seats."})
    memory.record(
        {
            "uid": "skill-1",
            "kind": "skill",
            "arch": "prompt",
            "content": f"# Skill: Book flights\n- {PASSPORT_RECORD} [passport@v1]\n"
            "- Ana prefers aisle seats. [pref@v1]",
            "meta": {"title": "Book flights", "instruction": "Quote the passport QX77121."},
            "inputs": ["passport", "pref"],
        }
    )
    memory.record(
        {
            "uid": "sum-1",
            "kind": "summary",
            "content": f"- {PASSPORT_RECORD} [passport@v1]\n- Ana prefers aisle seats. [pref@v1]",
            "meta": {"topic": "travel documents", "checked": "id QX77121 seen at check-in"},
            "inputs": ["passport", "pref"],
        }
    )
    memory.record(
        {
            "uid": "cache-1",
            "kind": "cache",
            "content": f"- {PASSPORT_RECORD} [passport@v1]\n- Ana prefers aisle seats. [pref@v1]",
            "recipe": {"executor": "text.join", "args": {"sep": " | "}},
            "meta": {"source": "documents", "key": "qx77121"},
            "inputs": ["sum-1"],
        }
    )


def test_a_delete_drops_meta_derived_from_the_deleted_text(memory: MemoryStore) -> None:
    derived_meta_memory(memory)
    report = memory.repair({"id": "gdpr-meta", "type": "delete", "roots": ["passport"]})
    assert report.status == "completed"
    assert sorted(report.published) == ["cache-1", "skill-1", "sum-1"]
    assert "qx77121" not in served_text(memory)
    assert "qx77121" not in everything(memory)
    metas = {a.uid: a.meta for a in memory.retrieve(limit=100)}
    assert metas["skill-1"] == {"title": "Book flights"}  # the rest is kept
    assert metas["sum-1"] == {"topic": "travel documents"}
    assert metas["cache-1"] == {"source": "documents"}
    hits = memory.search("passport QX77121", 10, mode="text")
    assert all("qx77121" not in h.content.lower() for h in hits)
    record = memory.audit_erasure("gdpr-meta")
    assert record["ok"], record["copies"]


class _LeakyRegen:
    """A regen plugin that copies a fact it remembers into the successor's meta."""

    name = "leaky-regen"
    mode = Mode.REGEN

    def __init__(self) -> None:
        self.inner = RegenOperator()

    def accepts(self, artifact: Artifact) -> bool:
        return artifact.uid == "sum-1"

    def build(self, ctx: RepairContext) -> Successor:
        built = self.inner.build(ctx)
        return replace(built, meta={"remembered": "passport QX77121"})

    def validate(self, ctx: RepairContext, successor: Successor) -> Validation:
        return self.inner.validate(ctx, successor)


def test_a_successor_carrying_erased_text_fails_validation_and_is_named(
    memory: MemoryStore,
) -> None:
    derived_meta_memory(memory)
    memory.register_operator(_LeakyRegen(), first=True)
    report = memory.repair({"id": "gdpr-leak", "type": "delete", "roots": ["passport"]})
    assert report.outcomes["failed"] == ["sum-1"]
    assert "erasure" in report.details["sum-1"] and "'remembered'" in report.details["sum-1"]
    assert "qx77121" not in report.details["sum-1"].lower()
    assert memory.retrieve(uid="sum-1") == []  # stays withdrawn
    assert "qx77121" not in everything(memory)  # the failed attempt was redacted too
    assert memory.audit_erasure("gdpr-leak")["ok"]


def test_a_delete_is_not_completed_while_its_erasure_scan_finds_a_copy(
    memory: MemoryStore, tmp_path: Path
) -> None:
    derived_meta_memory(memory)
    memory.record({"uid": "note", "kind": "record", "content": "Agent note: QX77121 on file."})
    event = write_event(tmp_path, {"id": "gdpr-copy", "type": "delete", "roots": ["passport"]})
    done = run_cli(memory.ns, "repair", str(event), "--json")
    assert done.returncode == 4, done.stdout + done.stderr
    report = json.loads(done.stdout)
    assert report["status"] == "open"
    assert report["erasure"]["ok"] is False
    assert report["erasure"]["copies"] == [
        {"where": f"{memory.ns}/note@1", "labels": "Artifact/Head/Live", "property": "content"}
    ]
    human = run_cli(memory.ns, "resume", "gdpr-copy")
    assert human.returncode == 4
    assert f"{memory.ns}/note@1" in human.stderr and "memorepair resume gdpr-copy" in human.stderr
    assert [e["id"] for e in memory.status()["open_events"]] == ["gdpr-copy"]
    memory.forget("note", event_id="gdpr-note")
    assert [r.status for r in memory.resume("gdpr-copy")] == ["completed"]
    assert memory.audit_erasure("gdpr-copy")["ok"]


def test_a_text_that_names_its_own_uid_is_erased_and_the_structure_kept(
    memory: MemoryStore,
) -> None:
    """The uid is structure (every redacted version, input list and event keeps it): a
    deleted text that names it ("fact rec-0") does not make those copies."""
    memory.record({"uid": "rec-0", "kind": "record", "content": "fact rec-0 from the booking"})
    memory.record({"uid": "rec-1", "kind": "record", "content": "fact rec-1"})
    memory.record(
        {
            "uid": "sum",
            "kind": "summary",
            "content": "- fact rec-0 from the booking [rec-0@v1]\n- fact rec-1 [rec-1@v1]",
            "inputs": ["rec-0", "rec-1"],
        }
    )
    report = memory.forget("rec-0", event_id="gdpr-uid")
    assert report.status == "completed" and report.erasure is not None
    assert report.erasure["ok"], report.erasure["copies"]
    assert events.recorded_spec(memory.store, memory.ns, "gdpr-uid").roots == ["rec-0"]
    assert "from the booking" not in everything(memory)


def test_a_phrase_other_records_share_is_not_a_copy(memory: MemoryStore) -> None:
    """Deleting one of many templated notes completes: the template is not the deleted
    note's own text (every other note would count as a copy); its own words are erased."""
    template = "The user asked the agent to book a table for dinner tonight at"
    for i, place in enumerate(["Kronenhalle", "Zeughauskeller", "Hiltl"]):
        memory.record({"uid": f"note-{i}", "kind": "record", "content": f"{template} {place}."})
    report = memory.forget("note-0", event_id="gdpr-template")
    assert report.status == "completed" and report.erasure is not None
    assert report.erasure["ok"] and report.erasure["copies"] == []
    assert "kronenhalle" not in everything(memory)
    memory.record({"uid": "leak", "kind": "record", "content": f"Again: {template} Kronenhalle."})
    copies = memory.audit_erasure("gdpr-template")["copies"]
    assert [c["where"] for c in copies] == [f"{memory.ns}/leak@1"]  # its own words are found


def test_an_identifier_earlier_memory_states_too_is_not_a_copy(memory: MemoryStore) -> None:
    """Two users' records name one shared account token: deleting one completes, and the
    other's record and the summary built from both keep the token (neither was copied
    from the deleted record: both existed before it). A note recorded after the deleted
    record that states the token is still a copy."""
    memory.record({"uid": "bob", "kind": "record", "content": "Bob logs in with token abc123xyz."})
    memory.record({"uid": "ana", "kind": "record", "content": "Ana logs in with token abc123xyz."})
    memory.record(
        {
            "uid": "logins",
            "kind": "summary",
            "content": "- Bob logs in with token abc123xyz. [bob@v1]\n"
            "- Ana logs in with token abc123xyz. [ana@v1]",
            "inputs": ["bob", "ana"],
        }
    )
    report = memory.forget("ana", event_id="gdpr-shared-token")
    assert report.status == "completed" and report.erasure is not None, report
    assert report.erasure["ok"] and report.erasure["copies"] == []
    assert report.outcomes["failed"] == []
    assert "ana logs in" not in everything(memory)
    served = memory.served(["bob", "logins"])
    assert "abc123xyz" in served["bob"].artifact.content
    assert "abc123xyz" in served["logins"].artifact.content
    assert "Ana" not in served["logins"].artifact.content
    memory.record({"uid": "leak", "kind": "record", "content": "Ana's word: abc123xyz, x9q7."})
    audit = memory.audit_erasure("gdpr-shared-token")
    assert audit["ok"]  # the token is not the deleted record's own: bob said it first
    memory.record({"uid": "carl", "kind": "record", "content": "Carl uses key zz9plural7."})
    memory.record({"uid": "copy", "kind": "record", "content": "Noted: key zz9plural7."})
    report = memory.forget("carl", event_id="gdpr-own-token")
    assert report.status == "open" and report.erasure is not None
    assert [c["where"] for c in report.erasure["copies"]] == [f"{memory.ns}/copy@1"]


def test_a_correction_that_erases_keeps_what_its_replacement_still_says(
    memory: MemoryStore,
) -> None:
    """Erasing a corrected text erases what the correction no longer says; the words it
    still says (here all of the old sentence, extended) are the new truth, so the
    successors quoting them publish and the event completes, as its plan said."""
    passport_memory(memory)
    spec = {
        "id": "fix-trains",
        "type": "correct",
        "erase": True,
        "roots": ["id-doc"],
        "replacements": [
            {
                "replaces": "id-doc",
                "content": "Quote passport QX77812 when booking flights or trains.",
            }
        ],
    }
    planned = memory.preview(spec)
    report = memory.repair(spec)
    assert report.status == "completed", report.details
    assert sorted(report.published) == ["booking-skill", "profile"]
    assert sorted(planned.outcomes.sets["published"]) == sorted(report.published)
    assert memory.audit_erasure("fix-trains")["ok"]


def test_correct_with_erase_removes_the_corrected_text(memory: MemoryStore) -> None:
    passport_memory(memory)
    memory.update("id-doc", content="Passport on file.", erase=True, event_id="fix-erase")
    assert "qx77812" not in everything(memory)
    assert memory.audit_erasure("fix-erase")["ok"]


# ---- stranded repairs -----------------------------------------------------------------------
def test_migrate_without_its_backend_exits_5_then_retry_publishes_everything(
    neo4j_settings: Settings, tmp_path: Path
) -> None:
    bare = neo4j_settings.model_copy(update={"sample_tools": False})
    with open_store(ns=f"t-retry-{tmp_path.name[-8:]}", settings=bare) as memory:
        try:
            memory.register_backend(CurrencyBackend())  # v1 only: v2 is not installed
            memory.import_file(SAMPLE / "memory.jsonl")
            env = {"MEMOREPAIR_SAMPLE_TOOLS": "false"}
            done = run_cli(memory.ns, "repair", str(SAMPLE / "event-migrate.json"), **env)
            assert done.returncode == 5, done.stdout + done.stderr
            assert "failed in sample-migrate-currency-v2" in done.stderr
            assert "memorepair retry sample-migrate-currency-v2" in done.stderr
            assert "no back-end 'currency' implements 'convert_amount'" in done.stderr
            status = json.loads(run_cli(memory.ns, "status", "--json", **env).stdout)
            assert {w["outcome"] for w in status["withdrawn"]} == {"failed", "blocked"}
            nothing = run_cli(memory.ns, "resume", **env)
            assert "no open events" in nothing.stdout
            memory.register_backend(CurrencyBackendV2())
            report = memory.retry("sample-migrate-currency-v2")
            assert report.event == "sample-migrate-currency-v2.retry-1"
            assert report.outcomes.get("failed", []) == [] == report.outcomes.get("blocked", [])
            assert len(report.published) == 11
            assert memory.still_withdrawn() == [] and memory.stale_served() == []
            with pytest.raises(InputError, match="nothing failed or blocked"):
                memory.retry("sample-migrate-currency-v2")
        finally:
            memory.clear()


def test_resume_skips_an_event_it_cannot_continue(memory: MemoryStore, tmp_path: Path) -> None:
    policy_memory(memory)
    stuck = RepairEventSpec.model_validate(
        {
            "id": "stuck",
            "ns": memory.ns,
            "type": "correct",
            "roots": ["trip"],
            "replacements": [{"replaces": "trip", "content": "Ana travels in June."}],
        }
    )
    later = RepairEventSpec.model_validate(
        {"id": "later", "ns": memory.ns, "type": "delete", "roots": ["policy"]}
    )
    # what a crash right after creating each event leaves: nodes at phase "created"
    for spec in (stuck, later):
        events.open_event(memory.store, spec, lam=1.0, selector="mincut", state_dir=tmp_path)
    reports = memory.resume()
    assert [(r.event, r.status) for r in reports] == [("stuck", "skipped"), ("later", "completed")]
    assert "submit the event file again" in reports[0].details["error"]
    assert memory.repair(stuck).status == "completed"  # the event file itself still runs


# ---- retrieval edges, export, bad input -------------------------------------------------------
def test_related_edges_survive_repair_and_round_trip(
    neo4j_settings: Settings, memory: MemoryStore, tmp_path: Path
) -> None:
    memory.import_file(SAMPLE / "memory.jsonl")
    for name in ("event-delete.json", "event-correct.json", "event-migrate.json"):
        memory.repair(SAMPLE / name)
    related = [(a.uid, a.version) for a in memory.retrieve(uid="sum-zurich", related=True)]
    assert related == [("sum-tokyo", 2)]
    assert [a.uid for a in memory.retrieve(uid="sum-ana", related=True)] == ["skill-pricing"]
    path = tmp_path / "export.jsonl"
    count = memory.export_file(path)
    served = {a.uid: (a.content, a.meta) for a in memory.retrieve(limit=10_000)}
    with open_store(ns=f"{memory.ns}-copy", settings=neo4j_settings) as copy:
        try:
            imported = copy.import_file(path)
            assert imported.written == count and imported.related == 3
            assert {a.uid: (a.content, a.meta) for a in copy.retrieve(limit=10_000)} == served
            assert [a.uid for a in copy.retrieve(uid="sum-zurich", related=True)] == ["sum-tokyo"]
        finally:
            copy.clear()


@pytest.mark.parametrize(
    ("replacement", "words"),
    [
        ({"content": "x" * 2000}, "over MEMOREPAIR_MAX_CONTENT_BYTES=1000"),
        ({"content": "\ud800"}, "lone surrogate"),
        ({"content": "ok", "meta": {"n": float("nan")}}, "not a JSON number"),
    ],
)
def test_a_bad_replacement_is_refused_before_anything_changes(
    neo4j_settings: Settings, memory: MemoryStore, replacement: dict[str, Any], words: str
) -> None:
    policy_memory(memory)
    small = neo4j_settings.model_copy(update={"max_content_bytes": 1000})
    with open_store(ns=memory.ns, settings=small) as capped:
        before = capped.counts()
        with pytest.raises(InputError, match=words):
            capped.repair(
                {
                    "id": "bad-fix",
                    "type": "correct",
                    "roots": ["trip"],
                    "replacements": [{"replaces": "trip", **replacement}],
                }
            )
        assert capped.counts() == before
        assert [e["event"] for e in capped.audit_events()] == []


def test_numbers_refuse_strings_and_booleans(memory: MemoryStore, tmp_path: Path) -> None:
    for value in ("5", True):
        with pytest.raises(InputError, match="value"):
            memory.record({"uid": "n", "kind": "record", "content": "x", "value": value})
    lines = tmp_path / "memory.jsonl"
    lines.write_text('{"type": "artifact", "uid": "a", "kind": "record", "content": "\\ud800"}\n')
    done = run_cli(memory.ns, "import", str(lines))
    assert done.returncode == 2 and f"{lines}:1: field 'content'" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_uid_that_names_a_version_is_refused(memory: MemoryStore) -> None:
    with pytest.raises(InputError, match="names a version"):
        memory.record({"uid": "a@2", "kind": "record", "content": "x"})
    memory.import_items([ArtifactIn(uid="a@b", kind=Kind.RECORD, content="x")])
    assert [a.uid for a in memory.retrieve(uid="a@b")] == ["a@b"]
