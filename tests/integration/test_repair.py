"""The whole contract on the real Neo4j, over the sample memory and all three event types."""

from __future__ import annotations

import itertools
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from memorepair import sample
from memorepair.api import MemoryStore
from memorepair.errors import EventStateError, InputError, UnknownArtifactError
from memorepair.model import Artifact, Mode
from memorepair.operators.base import Operator, RepairContext, Successor, Validation

DELETE, CORRECT, MIGRATE = (sample.path(name) for name in sample.EVENTS)


def load(memory: MemoryStore) -> None:
    memory.import_file(sample.path("memory.jsonl"))


def event(path: Path, **changes: Any) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text())
    data.update(changes)
    return data


class Spy:
    """Wraps a built-in operator: records what serving showed while each successor was built."""

    def __init__(
        self, inner: Operator, memory: MemoryStore, watched: list[str], fail: set[str] | None = None
    ) -> None:
        self.inner = inner
        self.name = f"spy-{inner.name}"
        self.mode = inner.mode
        self.memory = memory
        self.watched = watched
        self.fail = fail or set()
        self.served_during_build: dict[str, list[tuple[str, int]]] = {}

    def accepts(self, artifact: Artifact) -> bool:
        return self.inner.accepts(artifact)

    def build(self, ctx: RepairContext) -> Successor:
        seen = [(a.uid, a.version) for u in self.watched for a in self.memory.retrieve(uid=u)]
        self.served_during_build[ctx.artifact.uid] = seen
        return self.inner.build(ctx)

    def validate(self, ctx: RepairContext, successor: Successor) -> Validation:
        if ctx.artifact.uid in self.fail:
            return Validation(False, "rejected by the test")
        return self.inner.validate(ctx, successor)


def spy_on(memory: MemoryStore, watched: list[str], fail: set[str] | None = None) -> list[Spy]:
    spies = []
    for operator in list(memory.registry.operators):
        if operator.mode in (Mode.RECOMPUTE, Mode.REGEN, Mode.PARAM):
            spy = Spy(operator, memory, watched, fail)
            memory.register_operator(spy, first=True)
            spies.append(spy)
    return spies


def test_delete_withdraws_the_cascade_before_any_operator_runs(memory: MemoryStore) -> None:
    load(memory)
    plan = memory.plan(DELETE)
    cascade = plan.cascade
    assert set(cascade) == {
        "turn-03",
        "call-02",
        "cache-02",
        "sum-zurich",
        "sum-ana",
        "emb-zurich",
        "skill-router",
    }
    spies = spy_on(memory, cascade)
    report = memory.repair(DELETE)
    builds = {uid: seen for spy in spies for uid, seen in spy.served_during_build.items()}
    assert builds, "no operator ran"
    for uid, seen in builds.items():
        assert seen == [], f"while building {uid}, serving still returned {seen}"
    assert report.outcomes["root_deleted"] == ["turn-03"]
    assert report.outcomes["removed"] == ["cache-02", "call-02"]
    assert set(report.published) == {"sum-zurich", "sum-ana", "emb-zurich"}
    assert report.outcomes["unselected"] == ["skill-router"]  # w=6 < lambda*c=10
    assert memory.retrieve(uid="turn-03") == []
    assert memory.retrieve(uid="skill-router") == []
    (zurich,) = memory.retrieve(uid="sum-zurich")
    assert zurich.version == 2
    assert "hotel" not in zurich.content and "turn-03" not in zurich.content
    assert zurich.inputs == ["turn-01", "turn-02", "cache-01"]
    assert memory.stale_served() == []


def test_correct_replays_caches_from_the_replacement(memory: MemoryStore) -> None:
    load(memory)
    (before,) = memory.retrieve(uid="cache-01")
    report = memory.repair(CORRECT)
    assert report.outcomes["root_replaced"] == ["call-01"]
    assert "cache-01" in report.published
    (call,) = memory.retrieve(uid="call-01")
    assert call.version == 2 and json.loads(call.content)["args"]["amount"] == 1500
    (after,) = memory.retrieve(uid="cache-01")
    assert after.version == 2
    assert json.loads(before.content) == 1140.0  # 1200 EUR in CHF at the demo rate 0.95
    assert json.loads(after.content) == 1425.0
    (chain,) = memory.retrieve(uid="skill-convert-format")
    assert json.loads(chain.content)["steps"][0]["args"]["amount"] == 1500
    assert memory.stale_served() == []


def test_migrate_rewrites_chain_skills_and_replays_under_the_new_interface(
    memory: MemoryStore,
) -> None:
    load(memory)
    report = memory.repair(MIGRATE)
    assert "skill-convert-format" in report.published
    (chain,) = memory.retrieve(uid="skill-convert-format")
    steps = json.loads(chain.content)["steps"]
    assert steps[0]["function"] == "convert_amount"
    assert set(steps[0]["args"]) == {"value", "source", "target"}
    (iface,) = memory.retrieve(uid="iface-currency")
    assert "convert_amount" in json.loads(iface.content)["functions"]
    (cache,) = memory.retrieve(uid="cache-03")
    assert cache.version == 2 and json.loads(cache.content) == 231.48
    assert cache.meta["about"] == "result of call-03"  # meta carries over to successors
    assert memory.stale_served() == []


def test_failed_validation_keeps_the_candidate_and_its_dependents_withdrawn(
    memory: MemoryStore,
) -> None:
    load(memory)
    spy_on(memory, [], fail={"sum-zurich"})
    report = memory.repair(event(DELETE, id="delete-with-failure"))
    assert report.outcomes["failed"] == ["sum-zurich"]
    assert report.outcomes["blocked"] == ["emb-zurich", "sum-ana"]
    assert report.published == []
    for uid in ("sum-zurich", "emb-zurich", "sum-ana"):
        assert memory.retrieve(uid=uid) == []
    sets = memory.audit_event("delete-with-failure")
    assert [a["uid"] for a in sets["failed"]] == ["sum-zurich"]
    assert sets["failed"][0]["reason"] == "rejected by the test"
    withdrawn = {row["uid"]: row for row in memory.still_withdrawn()}
    assert withdrawn["sum-ana"]["outcome"] == "blocked"
    assert memory.stale_served() == []


def brute_force(plan_dict: Mapping[str, Any], lam: float) -> float:
    cands = [c for c in plan_dict["candidates"] if c["mode"] != "remove"]
    uids = [c["uid"] for c in cands]
    best = 0.0
    for bits in itertools.product([False, True], repeat=len(cands)):
        chosen = {u for u, b in zip(uids, bits, strict=True) if b}
        feasible = all(
            (c["uid"] not in chosen)
            or (c["executable"] and all(r in chosen for r in c["requires"]))
            for c in cands
        )
        if feasible:
            best = max(best, sum(c["value"] - lam * c["cost"] for c in cands if c["uid"] in chosen))
    return best


@pytest.mark.parametrize("path", [DELETE, CORRECT, MIGRATE], ids=["delete", "correct", "migrate"])
@pytest.mark.parametrize("lam", [0.0, 0.5, 1.0, 1.5, 3.0])
def test_plan_objective_equals_brute_force(memory: MemoryStore, path: Path, lam: float) -> None:
    load(memory)
    plan = memory.plan(path, lam=lam).as_dict()
    assert plan["objective"] == pytest.approx(brute_force(plan, lam))
    greedy = memory.plan(path, lam=lam, selector="greedy").as_dict()
    assert greedy["objective"] <= plan["objective"] + 1e-9


def test_plan_changes_nothing(memory: MemoryStore) -> None:
    load(memory)
    before = memory.counts()
    memory.plan(MIGRATE)
    assert memory.counts() == before
    assert memory.audit_events() == []


def test_unknown_root_withdraws_nothing(memory: MemoryStore) -> None:
    load(memory)
    before = memory.counts()
    with pytest.raises(UnknownArtifactError, match="no-such-turn"):
        memory.repair({"id": "bad-root", "type": "delete", "roots": ["turn-01", "no-such-turn"]})
    assert memory.counts() == before
    assert memory.stale_served() == []


def test_events_are_idempotent_by_id(memory: MemoryStore) -> None:
    load(memory)
    first = memory.repair(DELETE)
    counts = memory.counts()
    again = memory.repair(DELETE)
    assert memory.counts() == counts
    assert again.published == first.published
    assert again.outcomes["removed"] == first.outcomes["removed"]
    with pytest.raises(EventStateError, match="already used"):
        memory.repair(event(DELETE, roots=["turn-04"]))


def test_sequential_events_keep_complete_provenance(memory: MemoryStore) -> None:
    """Each event sees the successors of the previous one as its support. Every candidate
    is repaired (Repair-all): at the default λ whether a successor is worth its measured seconds
    depends on how fast this machine built the previous ones, which is not this test's
    question."""
    load(memory)
    memory.repair(DELETE, selector="all")
    memory.repair(CORRECT, selector="all")
    memory.repair(MIGRATE, selector="all")
    lineage = memory.lineage("sum-zurich")
    assert [row["version"] for row in lineage] == [1, 2, 3, 4]
    assert [row["visibility"] for row in lineage] == ["Superseded"] * 3 + ["Live"]
    assert lineage[-1]["published_by"] == "sample-migrate-currency-v2"
    assert "cache-01@3" in lineage[-1]["inputs"]
    deleted = memory.lineage("turn-03")
    assert deleted[0]["visibility"] == "Removed" and deleted[0]["erased"] is True
    assert memory.stale_served() == []


def test_audit_sets_match_the_report(memory: MemoryStore) -> None:
    load(memory)
    report = memory.repair(MIGRATE)
    sets = memory.audit_event(report.event)
    for outcome, uids in report.outcomes.items():
        assert sorted(a["uid"] for a in sets.get(outcome, [])) == uids, outcome
    published = {a["uid"]: a for a in sets["published"]}
    assert all(a["successor"] == 2 for a in published.values())
    events = memory.audit_events()
    assert events[0]["event"] == report.event and events[0]["status"] == "completed"


def test_export_round_trips_the_served_memory(memory: MemoryStore, tmp_path: Path) -> None:
    load(memory)
    memory.repair(DELETE)
    out = tmp_path / "live.jsonl"
    count = memory.export_file(out)
    assert count == memory.counts()["live"]
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert {line["uid"] for line in lines if line["type"] == "artifact"} == {
        a.uid for a in memory.retrieve(limit=1000)
    }


def test_record_refuses_missing_inputs(memory: MemoryStore) -> None:
    load(memory)
    with pytest.raises(InputError, match="not-there"):
        memory.record({"uid": "note-1", "kind": "summary", "content": "x", "inputs": ["not-there"]})
    row = memory.record(
        {"uid": "note-2", "kind": "summary", "content": "Ana.", "inputs": ["turn-01"]}
    )
    assert row["live"] is True
    assert [a.uid for a in memory.retrieve(uid="note-2")] == ["note-2"]


def test_readme_python_example(memory: MemoryStore) -> None:
    memory.record({"uid": "pref-1", "kind": "record", "content": "Ana prefers CHF."})
    memory.record(
        {
            "uid": "sum-1",
            "kind": "summary",
            "content": "- Ana prefers CHF. [pref-1@v1]",
            "inputs": ["pref-1"],
        }
    )
    report = memory.repair({"id": "gdpr-17", "type": "delete", "roots": ["pref-1"]})
    assert memory.retrieve(uid="sum-1") == []
    assert report.outcomes["removed"] == ["sum-1"]
    assert report.outcomes["root_deleted"] == ["pref-1"]


def test_versions_stay_distinct_after_discarded_attempts(memory: MemoryStore) -> None:
    """A successor takes the highest version ever written plus one, in its vid and its
    version property alike, even after a discarded attempt (here: a failed validation
    under one input's event, then two repairs under the other input's events)."""
    memory.record({"uid": "chf", "kind": "record", "content": "Ana prefers CHF."})
    memory.record({"uid": "zrh", "kind": "record", "content": "Ana lives in Zurich."})
    memory.record(
        {"uid": "digest", "kind": "summary", "content": "- Ana.", "inputs": ["chf", "zrh"]}
    )
    spies = spy_on(memory, [], fail={"digest"})

    def correct(n: int, root: str) -> Any:
        return memory.repair(
            {
                "id": f"fix-{n}",
                "type": "correct",
                "roots": [root],
                "replacements": [{"replaces": root, "content": f"corrected ({n})."}],
            }
        )

    assert correct(1, "chf").outcomes["failed"] == ["digest"]  # digest@2 staged, discarded
    for spy in spies:
        spy.fail.clear()
    assert correct(2, "zrh").published == ["digest"]  # digest@1 is still current: -> @3
    assert correct(3, "zrh").published == ["digest"]  # -> @4
    versions = [row["version"] for row in memory.lineage("digest")]
    assert versions == [1, 2, 3, 4]
    (served,) = memory.retrieve(uid="digest")
    assert served.version == 4
    assert memory.stale_served() == []


def test_a_chain_left_without_calls_is_removed_not_failed(memory: MemoryStore) -> None:
    """Deleting every tool-call record of a chain skill leaves its interface record as the
    only retained support: the chain operator has nothing to rebuild from, so the chain
    is removed (SPEC §4's remove mode, which only the operator can tell) instead of
    failing and staying withdrawn for a retry that could never help."""
    load(memory)
    report = memory.repair(
        {"id": "no-calls", "type": "delete", "roots": ["call-01", "call-05"]}, selector="all"
    )
    assert "skill-convert-format" in report.outcomes["removed"]
    assert "skill-convert-format" not in report.outcomes["failed"]
    assert "no retained tool-call records" in report.details["skill-convert-format"]
    lineage = memory.lineage("skill-convert-format")
    assert [row["visibility"] for row in lineage] == ["Removed"]
    # Removed is final: a later migration of its tool does not try it again.
    later = memory.plan(event(MIGRATE)).as_dict()
    assert "skill-convert-format" not in {c["uid"] for c in later["candidates"]}
