"""Concurrent readers, writers and overlapping events against the real Neo4j.

Readers are separate processes (loopback Bolt), writers are threads of this process; all
of them are bounded in number and time. Timings are printed, never asserted.
"""

from __future__ import annotations

import json
import random
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from reliability_support import (
    SAMPLE,
    check_invariants,
    correct_event,
    fan_memory,
    run_cli,
    sample_event,
    start_paused,
    versions,
    write_event,
)

from memorepair import faults
from memorepair.api import MemoryStore, open_store
from memorepair.errors import CascadeBusyError, InputError
from memorepair.model import ArtifactIn, Kind, Recipe
from memorepair.settings import Settings

READERS = 2


def _ms(values: list[float]) -> str:
    if not values:
        return "n/a"
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]
    return f"median {statistics.median(ordered) * 1e3:.1f} ms, p95 {p95 * 1e3:.1f} ms"


def test_readers_never_see_cascade_or_staged_versions(memory: MemoryStore, tmp_path: Path) -> None:
    width = 1000
    memory.import_items(fan_memory(width))
    uids = [f"c-{i}" for i in range(width)]
    random.Random(7).shuffle(uids)
    uids_file = tmp_path / "uids.json"
    uids_file.write_text(json.dumps(uids), encoding="utf-8")
    stop = tmp_path / "stop"
    outs = [tmp_path / f"reader-{k}.json" for k in range(READERS)]
    readers = [
        subprocess.Popen(
            [
                sys.executable,
                str(Path(__file__).with_name("reliability_support.py")),
                "reader",
                memory.ns,
                str(out),
                str(uids_file),
                str(stop),
            ]
        )
        for out in outs
    ]
    try:
        deadline = time.monotonic() + 60
        while not all(out.with_suffix(".ready").exists() for out in outs):
            assert time.monotonic() < deadline, "readers did not start"
            assert all(r.poll() is None for r in readers), "a reader died"
            time.sleep(0.05)
        time.sleep(1.5)  # idle reads
        marks: dict[str, float] = {"start": time.monotonic()}

        def progress(phase: str, done: int, total: int) -> None:
            if phase == "barrier" and done == 1:
                marks["barrier"] = time.monotonic()  # after the barrier's commit
            if phase == "publish" and done == 0:
                marks["publishing"] = time.monotonic()  # the first batch's transaction starts

        report = memory.repair(correct_event("big-correct", "root", "root v2"), progress=progress)
        marks["end"] = time.monotonic()
        time.sleep(0.5)  # reads after publication
    finally:
        stop.write_text("stop", encoding="utf-8")
        for r in readers:
            r.wait(timeout=60)
    assert report.status == "completed" and len(report.published) == width
    rows: list[list[Any]] = []
    for out in outs:
        rows += json.loads(out.read_text(encoding="utf-8"))
    barrier, publishing, end = marks["barrier"], marks["publishing"], marks["end"]
    stale = staged = 0
    for start, stop_t, uid, version in rows:
        if start > barrier and version == 1:
            stale += 1  # a withdrawn version of C(F) served after the barrier commit
        if stop_t < publishing and version is not None and version > 1:
            staged += 1  # a successor served before its publication began
        if start > end:
            assert version == 2, (uid, version)
    assert stale == 0 and staged == 0
    idle = [r for r in rows if r[1] < marks["start"]]
    during = [r for r in rows if r[0] > barrier and r[1] < end]
    assert idle and during
    assert all(r[3] is None for r in during if r[1] < publishing)
    print(
        f"\nreaders: {READERS} processes, repair of {width} artifacts took "
        f"{end - marks['start']:.1f}s (barrier {report.seconds['barrier']:.2f}s)"
    )
    print(f"  idle reads {len(idle)}: {_ms([r[1] - r[0] for r in idle])}")
    print(
        f"  reads during repair {len(during)} (stale {stale}, staged {staged}): "
        f"{_ms([r[1] - r[0] for r in during])}"
    )
    assert memory.stale_served() == []


#: Where the repair is killed: between its barrier and its hold step (withdrawn nodes name
#: no holder yet), and with the holder recorded.
PAUSES = ["withdrawn", "selected"]


@pytest.mark.parametrize("pause", PAUSES)
def test_late_arrival_during_open_repair_joins_the_event(
    memory: MemoryStore, neo4j_settings: Settings, tmp_path: Path, pause: str
) -> None:
    memory.import_file(SAMPLE / "memory.jsonl")
    event = sample_event("delete", "late", tmp_path)
    paused = start_paused(neo4j_settings, memory.ns, event, "late", pause)
    try:
        row = memory.record(
            {
                "uid": "late-1",
                "kind": "summary",
                "content": "derived late",
                "inputs": ["sum-zurich", "turn-02"],
            }
        )
        holder = None if pause == "withdrawn" else f"{memory.ns}/late"
        assert row["live"] is False and row["held_by"] == holder
        assert memory.retrieve(uid="late-1") == []
        row = memory.record(
            {"uid": "late-2", "kind": "cache", "content": "from the root", "inputs": ["turn-03"]}
        )
        assert row["live"] is False
    finally:
        paused.kill()
    done = run_cli(memory.ns, "resume")
    assert done.returncode == 0, done.stderr
    sets = memory.audit_event("late")
    assert sorted(a["uid"] for a in sets["late_arrival"]) == ["late-1", "late-2"]
    assert memory.retrieve(uid="late-1") == [] and memory.retrieve(uid="late-2") == []
    assert memory.stale_served() == []


def test_writers_racing_the_barrier_never_leave_stale_live(memory: MemoryStore) -> None:
    width = 1500
    memory.import_items(fan_memory(width))
    stop = threading.Event()
    written: list[tuple[str, bool, float]] = []
    refused: list[str] = []
    lock = threading.Lock()

    def writer(t: int) -> None:
        rng = random.Random(t)
        k = 0
        while not stop.is_set():
            uid = f"w{t}-{k}"
            k += 1
            try:
                row = memory.record(
                    {
                        "uid": uid,
                        "kind": "cache",
                        "content": "w",
                        "inputs": [f"c-{rng.randrange(width)}", "keep-1"],
                    }
                )
            except InputError as exc:  # the input was removed by the completed repair
                with lock:
                    refused.append(str(exc))
                continue
            with lock:
                written.append((uid, bool(row["live"]), time.monotonic()))

    threads = [threading.Thread(target=writer, args=(t,)) for t in range(4)]
    for thread in threads:
        thread.start()
    try:
        time.sleep(0.5)
        marks: dict[str, float] = {}

        def progress(phase: str, done: int, total: int) -> None:
            if phase == "barrier":
                marks[f"barrier-{done}"] = time.monotonic()

        report = memory.repair(
            {"id": "race", "type": "delete", "roots": ["root"], "lambda": 1e9}, progress=progress
        )
        time.sleep(0.3)
    finally:
        stop.set()
        for thread in threads:
            thread.join(timeout=60)
    assert report.status == "completed"
    assert memory.stale_served() == []
    served_writers = [uid for uid, _, _ in written if memory.retrieve(uid=uid)]
    assert served_writers == [], served_writers[:5]
    # every withdrawn record names its holder: none slipped between the barrier and hold
    unheld = [r["uid"] for r in memory.still_withdrawn() if r["event"] != "race"]
    assert unheld == [], unheld[:5]
    before = sum(1 for _, live, at in written if live)
    late = sum(1 for _, live, _ in written if not live)
    in_barrier = sum(1 for _, _, at in written if marks["barrier-0"] <= at <= marks["barrier-1"])
    assert all(at < marks["barrier-1"] for _, live, at in written if live)
    print(
        f"\nwriters: {len(written)} records ({before} live before the barrier, then withdrawn "
        f"by it; {late} withdrawn at once; {in_barrier} committed while the barrier ran), "
        f"{len(refused)} refused (input removed); barrier "
        f"{marks['barrier-1'] - marks['barrier-0']:.2f}s"
    )


def _overlap_memory() -> list[ArtifactIn]:
    recipe = Recipe(executor="text.join", args={"sep": "+"})
    return [
        ArtifactIn(uid="r1", kind=Kind.RECORD, content="one"),
        ArtifactIn(uid="r2", kind=Kind.RECORD, content="two"),
        ArtifactIn(uid="r3", kind=Kind.RECORD, content="three"),
        ArtifactIn(
            uid="shared", kind=Kind.CACHE, content="one+two", recipe=recipe, inputs=["r1", "r2"]
        ),
        ArtifactIn(uid="only1", kind=Kind.CACHE, content="one", recipe=recipe, inputs=["r1"]),
        ArtifactIn(uid="only2", kind=Kind.CACHE, content="two", recipe=recipe, inputs=["r2"]),
        ArtifactIn(uid="only3", kind=Kind.CACHE, content="three", recipe=recipe, inputs=["r3"]),
    ]


@pytest.mark.parametrize("pause", PAUSES)
def test_overlapping_events_serialize_and_disjoint_ones_proceed(
    memory: MemoryStore, neo4j_settings: Settings, tmp_path: Path, pause: str
) -> None:
    memory.import_items(_overlap_memory())
    first = write_event(tmp_path, correct_event("ev-1", "r1", "ONE"))
    paused = start_paused(neo4j_settings, memory.ns, first, "ev-1", pause)
    paused.kill()  # ev-1 now holds {r1, shared, only1} open, as after a crash
    holders = {r["uid"]: r["event"] for r in memory.still_withdrawn()}
    expected = "ev-1" if pause == "selected" else None  # before its hold step: no holder
    assert holders == {"shared": expected, "only1": expected}

    # disjoint cascade: proceeds at once
    assert memory.repair(correct_event("ev-3", "r3", "THREE")).status == "completed"
    assert memory.retrieve(uid="only3")[0].content == "THREE"

    # intersecting cascade, short wait: refused, nothing of it withdrawn
    impatient = open_store(
        ns=memory.ns, settings=neo4j_settings.model_copy(update={"busy_wait_s": 0.5})
    )
    try:
        why = "not yet recorded as held" if pause == "withdrawn" else "overlaps open event"
        with pytest.raises(CascadeBusyError, match=f"{why}.*ev-1"):
            impatient.repair(correct_event("ev-2", "r2", "TWO"))
    finally:
        impatient.close()
    assert memory.retrieve(uid="only2")[0].version == 1

    # intersecting cascade, patient: waits for ev-1, then runs on its successors
    outcome: dict[str, Any] = {}

    def second() -> None:
        try:
            outcome["report"] = memory.repair(correct_event("ev-2", "r2", "TWO"))
        except Exception as exc:  # reported below
            outcome["error"] = exc

    thread = threading.Thread(target=second)
    thread.start()
    time.sleep(1.0)
    assert thread.is_alive(), outcome
    assert memory.retrieve(uid="only2")[0].version == 1  # still waiting: not withdrawn
    done = run_cli(memory.ns, "resume", "ev-1")
    assert done.returncode == 0, done.stderr
    thread.join(timeout=90)
    assert "error" not in outcome, outcome
    assert outcome["report"].status == "completed"

    shared = memory.retrieve(uid="shared")
    assert [(a.version, a.content) for a in shared] == [(3, "ONE+TWO")]  # no lost update
    assert versions(memory, "shared") == [(1, "Superseded"), (2, "Superseded"), (3, "Live")]
    assert memory.retrieve(uid="only1")[0].content == "ONE"
    assert memory.retrieve(uid="only2")[0].content == "TWO"
    assert memory.stale_served() == []
    events = {e["event"]: e["status"] for e in memory.audit_events()}
    assert events == {"ev-1": "completed", "ev-2": "completed", "ev-3": "completed"}


# ---- an overlapping event on what a repair republished, while it still publishes --------
WIDTH = 10


def _two_layers() -> list[ArtifactIn]:
    """fan_memory's caches, each read by one summary (text.join of its cache and a retained
    record): a `correct` of the root republishes every cache, then every summary."""
    items = fan_memory(WIDTH, keep=4)
    recipe = Recipe(executor="text.join", args={"sep": " / "})
    items += [
        ArtifactIn(
            uid=f"s-{i}",
            kind=Kind.CACHE,
            content=f"root v1 | retained {i % 4} / retained {i % 4}",
            recipe=recipe,
            inputs=[f"c-{i}", f"keep-{i % 4}"],
        )
        for i in range(WIDTH)
    ]
    return items


@pytest.mark.parametrize("other", ["delete", "correct"])
def test_an_event_on_a_republished_input_drops_what_was_built_from_it(
    memory: MemoryStore, neo4j_settings: Settings, monkeypatch: pytest.MonkeyPatch, other: str
) -> None:
    """A repair publishes in batches of 4, two at once (caches first, then summaries).
    Once its second batch is handed to a writer, another event deletes or corrects the
    cache c-0 its first batch republished (the other event's barrier waits for both
    batches to commit; the repair builds nothing meanwhile): the summary built from that
    version of c-0 is not published (`input_withdrawn`: its input was withdrawn or
    replaced since), every other successor is, and nothing stale is served."""
    memory.import_items(_two_layers())
    settings = neo4j_settings.model_copy(update={"repair_batch": 4, "repair_writers": 2})
    repairing = open_store(ns=memory.ns, settings=settings)
    second = {
        "delete": {"id": "ev-2", "type": "delete", "roots": ["c-0"]},
        "correct": correct_event("ev-2", "c-0", "c-0 corrected"),
    }[other]
    handed: list[str] = []
    seen: dict[str, Any] = {}
    real = faults.pause_if_asked

    def meanwhile(state_dir: Path, tag: str, point: str) -> None:
        if tag == "ev-1" and point == "staging":  # on the repair's builder thread
            handed.append(point)
            if len(handed) == 2:
                seen["report"] = memory.repair(second)
        real(state_dir, tag, point)

    monkeypatch.setattr(faults, "pause_if_asked", meanwhile)
    try:
        report = repairing.repair(correct_event("ev-1", "root", "root v2"))
    finally:
        repairing.close()

    # the delete erases c-0's text, which the withdrawn summaries still carry (ev-1 holds
    # them): it stays open until they are gone, as an erasure does; its barrier is done
    assert seen["report"].status == ("completed" if other == "correct" else "open"), seen
    assert report.outcomes["input_withdrawn"] == ["s-0"], report.outcomes
    assert sorted(report.published) == sorted(
        [f"c-{i}" for i in range(WIDTH)] + [f"s-{i}" for i in range(1, WIDTH)]
    )
    assert "replaced" in report.details["s-0"]
    assert memory.retrieve(uid="s-0") == []  # still withdrawn, held by ev-1 (retry it)
    allowed = {"root": 2, **{f"c-{i}": 2 for i in range(1, WIDTH)}}
    allowed.update({f"s-{i}": 2 for i in range(1, WIDTH)})
    if other == "correct":
        allowed["c-0"] = 3
        assert memory.retrieve(uid="c-0")[0].content == "c-0 corrected"
    check_invariants(memory, [*allowed, "c-0", "s-0"], allowed=allowed)
