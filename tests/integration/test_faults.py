"""Crash safety, resume and database faults, against the real Neo4j and the real CLI.

Every phase of a repair is recorded on the event node; the fault hook
(`MEMOREPAIR_FAULT_PAUSE_AFTER=<phase>`) holds a real `memorepair repair` process right
after recording a phase, the test SIGKILLs it and checks what serving sees, then finishes
the event (with `memorepair resume`, or by running the same event file again) and compares
the outcome with an uninterrupted run of the same event on a fresh namespace.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from reliability_support import (
    PHASES,
    SAMPLE,
    check_invariants,
    run_cli,
    same_vectors,
    sample_event,
    served,
    start_paused,
    vectors,
    versions,
)

from memorepair.api import MemoryStore, open_store
from memorepair.errors import DatabaseError
from memorepair.local.server import LocalServer
from memorepair.model import ArtifactIn, Kind
from memorepair.settings import Settings

#: `memorepair resume` finishes the delete event, re-running the file finishes the correct
#: one, so each method and each event type is killed after every phase it goes through
#: (only the delete erases: it completes at "erased", the correct one at "published").
EVENT_FOR = {"resume": "delete", "rerun": "correct"}
LAST_PHASE = {"delete": "erased", "correct": "published"}
KILL_POINTS = [
    (phase, method)
    for method, name in EVENT_FOR.items()
    for phase in PHASES[: PHASES.index(LAST_PHASE[name]) + 1]
]
KILLS: dict[str, int] = {}


@dataclass(frozen=True)
class Reference:
    cascade: list[str]
    served: dict[str, tuple[int, str]]
    outcomes: dict[str, list[str]]
    lineage: dict[str, list[tuple[int, str]]]
    #: Every version's visibility and vector once the embedding writer is done.
    vectors: dict[tuple[str, int], tuple[str, list[float] | None]]


@pytest.fixture(scope="module")
def references(
    neo4j_settings: Settings, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, Reference]]:
    """One uninterrupted run of each sample event, each on a fresh namespace."""
    refs: dict[str, Reference] = {}
    tmp = tmp_path_factory.mktemp("refs")
    for name in sorted(set(EVENT_FOR.values())):
        with open_store(ns=f"ref{uuid.uuid4().hex[:10]}", settings=neo4j_settings) as memory:
            try:
                memory.import_file(SAMPLE / "memory.jsonl")
                event = sample_event(name, f"ref-{name}", tmp)
                cascade = memory.plan(event).cascade
                report = memory.repair(event)
                assert report.status == "completed"
                memory.flush_embeddings()
                refs[name] = Reference(
                    cascade,
                    served(memory),
                    {k: v for k, v in memory.report(report.event).outcomes.items() if v},
                    {uid: versions(memory, uid) for uid in cascade},
                    vectors(memory),
                )
            finally:
                memory.clear()
    yield refs
    print(f"\nkills survived per phase: {KILLS}")


def _allowed(ref: Reference, name: str, phase: str) -> dict[str, int]:
    """Versions of cascade uids that may be served while the event is held after `phase`:
    from "staged" on, the published successors (the writer publishes each batch in the
    transaction that stages it, once what it requires is published)."""
    if phase in ("staged", "validated", "published", "erased"):
        return {uid: ver for uid, (ver, _) in ref.served.items() if uid in ref.cascade}
    if name == "correct":  # the replacement X_delta is served from the barrier on
        return {
            uid: ver
            for uid, (ver, _) in ref.served.items()
            if uid in ref.outcomes.get("root_replaced", [])
        }
    return {}


@pytest.mark.parametrize(("phase", "method"), KILL_POINTS)
def test_kill_after_each_phase_then_complete_exactly_once(
    memory: MemoryStore,
    neo4j_settings: Settings,
    references: dict[str, Reference],
    tmp_path: Path,
    phase: str,
    method: str,
) -> None:
    name = EVENT_FOR[method]
    ref = references[name]
    memory.import_file(SAMPLE / "memory.jsonl")
    memory.flush_embeddings()
    event_id = f"crash-{phase}-{method}"
    event = sample_event(name, event_id, tmp_path)
    assert memory.plan(event).cascade == ref.cascade
    allowed = _allowed(ref, name, phase)

    paused = start_paused(neo4j_settings, memory.ns, event, event_id, phase)
    check_invariants(memory, ref.cascade, allowed=allowed)  # held open, process alive
    paused.kill()
    check_invariants(memory, ref.cascade, allowed=allowed)  # after SIGKILL
    [row] = [r for r in memory.audit_events() if r["event"] == event_id]
    assert row["phase"] == phase
    completed = phase == LAST_PHASE[name]
    assert row["status"] == ("completed" if completed else "open")
    if phase == "published":  # killed between publication and the last vector written
        _assert_vectors_pending(memory, ref)

    if method == "resume":
        done = run_cli(memory.ns, "resume")
        again = run_cli(memory.ns, "resume")
        assert again.returncode == 0 and "no open events" in again.stdout
    else:
        done = run_cli(memory.ns, "repair", str(event))
        again = run_cli(memory.ns, "repair", str(event))
        assert again.returncode == 0 and f"resumed from {LAST_PHASE[name]}" in again.stdout
    assert done.returncode == 0, done.stderr
    if not completed:
        assert f"resumed from {phase}" in done.stdout, done.stdout

    # exactly once: the same served memory, outcomes and version histories as an
    # uninterrupted run; old versions kept as Superseded, no twin versions
    check_invariants(memory, ref.cascade, allowed=_allowed(ref, name, "published"))
    assert served(memory) == ref.served
    report = memory.report(event_id)
    assert report.status == "completed"
    assert {k: v for k, v in report.outcomes.items() if v} == ref.outcomes
    assert {uid: versions(memory, uid) for uid in ref.cascade} == ref.lineage
    for uid in ref.outcomes.get("published", []):
        assert (1, "Superseded") in versions(memory, uid)
    assert memory.counts()["staged"] == 0
    assert same_vectors(vectors(memory), ref.vectors) == []  # vectors too: none missing
    KILLS[phase] = KILLS.get(phase, 0) + 1


def _assert_vectors_pending(memory: MemoryStore, ref: Reference) -> None:
    """Published successors wait for their vectors (the writer runs after publication):
    some are served without one yet, their superseded predecessors still hold theirs, and
    no search in any mode returns a version that is not the served one."""
    state = vectors(memory)
    published = set(ref.outcomes["published"])
    waiting = [k for k, (vis, vec) in state.items() if k[0] in published and vis == "Live"]
    assert waiting and all(state[k][1] is None for k in waiting), waiting
    assert any(vis == "Superseded" and vec is not None for vis, vec in state.values())
    for mode in ("vector", "hybrid", "text"):
        for hit in memory.search("Ana Zurich hotel currency", 50, mode=mode):  # type: ignore[arg-type]
            [current] = memory.retrieve(uid=hit.uid)
            assert hit.version == current.version, (mode, hit)


# ---- database faults ----------------------------------------------------------------------
def _kill_mid_batches(
    memory: MemoryStore,
    neo4j_settings: Settings,
    tmp_path: Path,
    name: str,
    event_id: str,
    point: str,
) -> None:
    """Import the sample, run `name`'s event in batches of 2 and SIGKILL it at `point`."""
    memory.import_file(SAMPLE / "memory.jsonl")
    memory.flush_embeddings()
    event = sample_event(name, event_id, tmp_path)
    env = {"MEMOREPAIR_REPAIR_BATCH": "2"}
    start_paused(neo4j_settings, memory.ns, event, event_id, point, env=env).kill()


def _resume_ends_like_reference(
    memory: MemoryStore, ref: Reference, name: str, event_id: str, resumed_from: str
) -> dict[str, list[str]]:
    """`memorepair resume` (batches of 2) ends the event as an uninterrupted run did: the
    same served memory, outcomes and version histories. Returns the outcomes."""
    done = run_cli(memory.ns, "resume", MEMOREPAIR_REPAIR_BATCH="2")
    assert done.returncode == 0, done.stderr
    assert f"resumed from {resumed_from}" in done.stdout
    check_invariants(memory, ref.cascade, allowed=_allowed(ref, name, "published"))
    assert served(memory) == ref.served
    outcomes = {k: v for k, v in memory.report(event_id).outcomes.items() if v}
    assert outcomes == ref.outcomes
    assert {uid: versions(memory, uid) for uid in ref.cascade} == ref.lineage
    memory.flush_embeddings()
    assert same_vectors(vectors(memory), ref.vectors) == []  # none left without its vector
    return outcomes


def test_kill_between_publication_batches_leaves_a_closed_served_set(
    memory: MemoryStore,
    neo4j_settings: Settings,
    references: dict[str, Reference],
    tmp_path: Path,
) -> None:
    """Publication commits in topological batches (each in the transaction that stages it,
    while execution builds the next); a kill between two of them serves only successors
    whose required predecessors are served, and resuming finishes the rest."""
    ref = references["correct"]
    _kill_mid_batches(
        memory, neo4j_settings, tmp_path, "correct", "crash-mid-publication", "publishing"
    )
    check_invariants(memory, ref.cascade, allowed=_allowed(ref, "correct", "published"))
    live_now = [uid for uid in ref.outcomes["published"] if memory.retrieve(uid=uid)]
    assert 0 < len(live_now) < len(ref.outcomes["published"])  # really part-way
    _resume_ends_like_reference(memory, ref, "correct", "crash-mid-publication", "selected")


def test_kill_while_staging_batches_are_in_flight_stages_each_successor_once(
    memory: MemoryStore,
    neo4j_settings: Settings,
    references: dict[str, Reference],
    tmp_path: Path,
) -> None:
    """The writer stages (and publishes) behind the builds, one batch in flight. A kill
    right after a batch was handed to it loses at most that batch: what is served is the
    published part of a predecessor-closed prefix, nothing staged is served, and resuming
    reuses what committed (keyed by vid), so every uid ends with the same versions as an
    uninterrupted run."""
    ref = references["correct"]
    _kill_mid_batches(memory, neo4j_settings, tmp_path, "correct", "crash-mid-staging", "staging")
    check_invariants(memory, ref.cascade, allowed=_allowed(ref, "correct", "published"))
    written = [
        uid
        for uid in ref.outcomes["published"]
        if any(version > 1 for version, _ in versions(memory, uid))
    ]
    assert len(written) < len(ref.outcomes["published"])  # really part-way
    served_now = {uid for uid in ref.cascade if memory.retrieve(uid=uid)}
    assert served_now <= set(written) | set(_allowed(ref, "correct", "selected"))
    _resume_ends_like_reference(memory, ref, "correct", "crash-mid-staging", "selected")


def test_kill_between_candidate_fact_batches_writes_each_withdrew_edge_once(
    memory: MemoryStore,
    neo4j_settings: Settings,
    references: dict[str, Reference],
    tmp_path: Path,
) -> None:
    """The barrier marks the cascade held; the WITHDREW edges of its descendants are
    written with the candidate facts, in batches. A kill between two batches leaves some
    written: resuming writes the rest, none twice, and ends like an uninterrupted run."""
    ref = references["delete"]
    _kill_mid_batches(memory, neo4j_settings, tmp_path, "delete", "crash-mid-record", "recording")
    check_invariants(memory, ref.cascade)
    [held] = [r for r in memory.audit_events() if r["event"] == "crash-mid-record"]
    assert held["phase"] == "withdrawn" and held["status"] == "open"
    audited = {uid for uids in memory.report("crash-mid-record").outcomes.values() for uid in uids}
    assert 0 < len(audited) < len(ref.cascade)  # really part-way: some edges, not all
    outcomes = _resume_ends_like_reference(memory, ref, "delete", "crash-mid-record", "withdrawn")
    # one WITHDREW edge per node: no uid listed twice
    assert sorted(uid for uids in outcomes.values() for uid in uids) == ref.cascade


def _one_line_error(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1, stderr
    assert lines[0].startswith("error: "), stderr
    return lines[0]


@pytest.mark.serial
def test_server_stopped_mid_repair_leaves_event_resumable(
    memory: MemoryStore, neo4j_settings: Settings, tmp_path: Path
) -> None:
    if not neo4j_settings.uses_local_server:
        pytest.skip("needs the local server: the test stops and restarts it")
    memory.import_file(SAMPLE / "memory.jsonl")
    event = sample_event("delete", "db-down", tmp_path)
    cascade = memory.plan(event).cascade
    paused = start_paused(neo4j_settings, memory.ns, event, "db-down", "selected")
    server = LocalServer(neo4j_settings)
    try:
        assert server.stop(timeout_s=10)  # clean shutdown, else SIGKILL: both are faults
        paused.kill()
        status = run_cli(memory.ns, "status")
        assert status.returncode == 1
        line = _one_line_error(status.stderr)
        assert "unreachable" in line and "memorepair neo4j start" in line
        again = run_cli(memory.ns, "repair", str(event))
        assert again.returncode == 1
        assert "unreachable" in _one_line_error(again.stderr)
        with pytest.raises(DatabaseError, match="unreachable"):
            memory.counts()
    finally:
        server.start()
    deadline = time.monotonic() + 60
    while True:  # the open driver reconnects once the server answers again
        try:
            memory.counts()
            break
        except DatabaseError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)
    status = run_cli(memory.ns, "status")
    assert status.returncode == 0 and "db-down (selected)" in status.stdout
    check_invariants(memory, cascade)
    done = run_cli(memory.ns, "resume")
    assert done.returncode == 0, done.stderr
    assert "resumed from selected" in done.stdout
    assert memory.report("db-down").status == "completed"
    assert memory.stale_served() == []


# ---- the barrier on 100k nodes --------------------------------------------------------------
class _Halt(Exception):
    """Stops the repair right after the barrier committed (as a crash would)."""


@pytest.mark.slow
def test_barrier_withdraws_100k_nodes_in_one_transaction(
    memory: MemoryStore, neo4j_settings: Settings
) -> None:
    # The fixture's namespace, without embeddings: the barrier touches no vector, and 100k
    # deferred ones written beside it (then deleted with the namespace) only add minutes.
    unembedded = neo4j_settings.model_copy(update={"embeddings": False})
    with open_store(ns=memory.ns, settings=unembedded) as plain:
        _barrier_on_100k(plain)


def _barrier_on_100k(memory: MemoryStore) -> None:
    mids, leaves = 1000, 99
    items = [ArtifactIn(uid="root", kind=Kind.RECORD, content="root")]
    for i in range(mids):
        items.append(ArtifactIn(uid=f"m{i}", kind=Kind.CACHE, content="m", inputs=["root"]))
        items += [
            ArtifactIn(uid=f"l{i}-{j}", kind=Kind.CACHE, content="l", inputs=[f"m{i}"])
            for j in range(leaves)
        ]
    total = len(items)
    assert total == 100_001
    clock = time.perf_counter()
    imported = memory.import_items(items)
    import_s = time.perf_counter() - clock
    assert imported.live == total

    seen: dict[str, dict[str, int]] = {}
    marks: dict[int, float] = {}

    def progress(phase: str, done: int, of: int) -> None:
        if phase == "barrier":
            marks[done] = time.perf_counter()
        if phase == "barrier" and done == 1:
            seen["counts"] = memory.counts()
            raise _Halt

    with pytest.raises(_Halt):
        memory.repair({"id": "big-delete", "type": "delete", "roots": ["root"]}, progress=progress)
    assert seen["counts"]["withdrawn"] == total
    assert seen["counts"]["live"] == 0
    [event] = [r for r in memory.audit_events() if r["event"] == "big-delete"]
    assert event["phase"] == "withdrawn" and event["status"] == "open"
    assert event["withdrawn"] == total
    assert memory.retrieve(uid="l999-98") == [] and memory.retrieve(uid="root") == []
    print(
        f"\n100k barrier: import {import_s:.1f}s, barrier (one transaction, {total} nodes) "
        f"{marks[1] - marks[0]:.2f}s"
    )
