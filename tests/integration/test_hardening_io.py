"""Bounded errors and files on the real server: a 100k-root error stays under 2 KB, a
busy error never names another namespace's events, export neither overwrites nor follows
a symbolic link, `export -` writes to stdout, and import streams a file.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest
from reliability_support import SAMPLE, correct_event, run_cli, start_paused, write_event

from memorepair.api import MemoryStore, open_store
from memorepair.errors import CascadeBusyError, InputError, UnknownArtifactError
from memorepair.model import ArtifactIn, Kind, Recipe
from memorepair.settings import Settings

MANY = 100_000


def test_a_100k_root_error_is_under_2_kb(memory: MemoryStore) -> None:
    memory.import_file(SAMPLE / "memory.jsonl")
    roots = [f"ghost-{i:06d}" for i in range(MANY)]
    with pytest.raises(UnknownArtifactError) as caught:
        memory.repair({"id": "many-ghosts", "type": "delete", "roots": roots})
    message = str(caught.value)
    assert len(message.encode("utf-8")) < 2048, len(message)
    assert "100,000 unknown roots (e.g. 'ghost-000000', 'ghost-000001', 'ghost-000002')" in message
    deleted = memory.repair({"id": "del-one", "type": "delete", "roots": ["turn-01"]})
    assert deleted.status == "completed"
    with pytest.raises(UnknownArtifactError, match=r"1 root \('turn-01'\) already deleted"):
        memory.repair({"id": "del-again", "type": "delete", "roots": ["turn-01"]})


def test_a_record_with_100k_missing_inputs_is_refused_briefly(memory: MemoryStore) -> None:
    inputs = [f"nowhere-{i:06d}" for i in range(MANY)]
    with pytest.raises(UnknownArtifactError) as caught:
        memory.record({"uid": "wide", "kind": "summary", "content": "x", "inputs": inputs})
    assert len(str(caught.value)) < 2048
    assert "100,000 inputs (e.g. 'nowhere-000000'" in str(caught.value)
    assert memory.retrieve(uid="wide") == []


def _two_memory() -> list[ArtifactIn]:
    recipe = Recipe(executor="text.join", args={"sep": "+"})
    return [
        ArtifactIn(uid="r1", kind=Kind.RECORD, content="one"),
        ArtifactIn(uid="r2", kind=Kind.RECORD, content="two"),
        ArtifactIn(
            uid="both", kind=Kind.CACHE, content="one+two", recipe=recipe, inputs=["r1", "r2"]
        ),
    ]


def test_a_busy_error_names_only_its_own_namespace(
    memory: MemoryStore, neo4j_settings: Settings, tmp_path: Path
) -> None:
    other = open_store(ns=f"{memory.ns}-other", settings=neo4j_settings)
    paused = []
    try:
        for store, event_id in ((other, "other-tenant-event"), (memory, "own-event")):
            store.import_items(_two_memory())
            event = write_event(tmp_path, correct_event(event_id, "r1", "ONE"))
            paused.append(start_paused(neo4j_settings, store.ns, event, event_id, "withdrawn"))
            paused[-1].kill()  # both events stay between barrier and hold, as after a crash
        impatient = open_store(
            ns=memory.ns, settings=neo4j_settings.model_copy(update={"busy_wait_s": 0.2})
        )
        try:
            with pytest.raises(CascadeBusyError) as caught:
                impatient.repair(correct_event("second", "r2", "TWO"))
        finally:
            impatient.close()
        message = str(caught.value)
        assert "not yet recorded as held" in message and "own-event" in message
        assert "other-tenant-event" not in message and other.ns not in message
    finally:
        for p in paused:
            p.kill()
        other.clear()
        other.close()


def test_export_refuses_to_overwrite_or_follow_a_link(memory: MemoryStore, tmp_path: Path) -> None:
    memory.import_file(SAMPLE / "memory.jsonl")
    out = tmp_path / "out.jsonl"
    count = memory.export_file(out)
    assert count > 0 and stat.S_IMODE(out.stat().st_mode) == 0o600
    first = out.read_text(encoding="utf-8")
    with pytest.raises(InputError, match=r"already exists.*--force"):
        memory.export_file(out)
    out.write_text("stale\n", encoding="utf-8")
    assert memory.export_file(out, force=True) == count
    assert out.read_text(encoding="utf-8") == first
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me\n", encoding="utf-8")
    link = tmp_path / "link.jsonl"
    link.symlink_to(victim)
    for force in (False, True):
        with pytest.raises(InputError, match="symbolic link"):
            memory.export_file(link, force=force)
    dangling = tmp_path / "dangling.jsonl"
    dangling.symlink_to(tmp_path / "would-be-created")
    with pytest.raises(InputError, match="symbolic link"):
        memory.export_file(dangling)
    assert victim.read_text(encoding="utf-8") == "keep me\n"
    assert not (tmp_path / "would-be-created").exists()


def test_export_dash_writes_to_stdout(memory: MemoryStore, tmp_path: Path) -> None:
    memory.import_file(SAMPLE / "memory.jsonl")
    done = run_cli(memory.ns, "export", "-")
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert len([x for x in lines if x["type"] == "artifact"]) == len(memory.retrieve(limit=1000))
    assert "exported" in done.stderr and not (Path.cwd() / "-").exists()
    exists = tmp_path / "there.jsonl"
    exists.write_text("", encoding="utf-8")
    refused = run_cli(memory.ns, "export", str(exists))
    assert refused.returncode == 2 and "--force" in refused.stderr
    assert run_cli(memory.ns, "export", "--force", str(exists)).returncode == 0
    assert exists.read_text(encoding="utf-8").count("\n") == len(done.stdout.splitlines())


def test_import_streams_and_refuses_a_file_changed_midway(
    memory: MemoryStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memorepair.interchange import MemoryIndex

    path = tmp_path / "memory.jsonl"
    items = [
        {"type": "artifact", "uid": "b", "kind": "cache", "content": "B", "inputs": ["a"]},
        {"type": "artifact", "uid": "a", "kind": "record", "content": "A" * 1000},
    ]
    path.write_text("".join(json.dumps(i) + "\n" for i in items), encoding="utf-8")
    loaded: list[list[str]] = []
    original = MemoryIndex.load

    def spy(self: MemoryIndex, uids: list[str]) -> list[ArtifactIn]:
        loaded.append(list(uids))
        return original(self, uids)

    monkeypatch.setattr(MemoryIndex, "load", spy)
    report = memory.import_file(path)
    assert report.written == 2 and loaded == [["a", "b"]]  # input first, read by offset
    assert memory.retrieve(uid="b")[0].inputs == ["a"]
    changed = tmp_path / "changed.jsonl"
    changed.write_text(json.dumps({**items[1], "uid": "c"}) + "\n", encoding="utf-8")

    def swap(self: MemoryIndex, uids: list[str]) -> list[ArtifactIn]:
        self.path.write_text(json.dumps({**items[1], "uid": "d"}) + "\n", encoding="utf-8")
        return original(self, uids)

    monkeypatch.setattr(MemoryIndex, "load", swap)
    with pytest.raises(InputError, match="changed during the import"):
        memory.import_file(changed)
    assert memory.retrieve(uid="c") == [] and memory.retrieve(uid="d") == []
    assert os.path.getsize(changed) > 0
