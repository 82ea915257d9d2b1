"""The CLI is a thin shell over the API: run it as an operator would and check the graph."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from memorepair import sample
from memorepair.api import MemoryStore
from memorepair.cli import cli

MEMOREPAIR = Path(sys.executable).parent / "memorepair"


def run(memory: MemoryStore, *args: str) -> Any:
    result = CliRunner().invoke(cli, ["--ns", memory.ns, *args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout) if "--json" in args else result.stdout


def test_operator_session(memory: MemoryStore) -> None:
    imported = run(memory, "import", str(sample.path("memory.jsonl")), "--json")
    assert imported["written"] == 32 and imported["live"] == 32

    plan = run(memory, "plan", str(sample.path("event-delete.json")), "--json")
    assert memory.audit_events() == []  # a plan writes nothing
    selected = sorted(c["uid"] for c in plan["candidates"] if c["selected"])

    report = run(memory, "repair", str(sample.path("event-delete.json")), "--json")
    assert report["status"] == "completed"
    assert sorted(report["selected"]) == selected
    assert report["cost"] <= report["repair_all_cost"]

    sets = run(memory, "audit", "event", report["event"], "--json")
    assert sorted(a["uid"] for a in sets["published"]) == report["outcomes"]["published"]
    lineage = run(memory, "audit", "lineage", "sum-zurich", "--json")
    assert [row["visibility"] for row in lineage] == ["Superseded", "Live"]
    withdrawn = run(memory, "audit", "withdrawn", "--json")
    assert {row["uid"] for row in withdrawn} == set(report["outcomes"]["unselected"])
    assert run(memory, "retrieve", "--uid", "turn-03", "--json") == []
    live = run(memory, "retrieve", "--kind", "summary", "--json")
    assert {a["uid"] for a in live} >= {"sum-zurich", "sum-ana"}
    assert all(a["visibility"] == "Live" for a in live)
    status = run(memory, "status", "--json")
    assert status["open_events"] == [] and status["artifacts"]["removed"] == 3
    assert "ok" in run(memory, "audit", "check")
    human = run(memory, "repair", str(sample.path("event-delete.json")))
    assert "resumed from erased" in human  # same id again: returns the recorded result


def test_errors_are_one_line_with_a_nonzero_exit(memory: MemoryStore, tmp_path: Any) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"type": "artifact", "uid": "a", "kind": "skill", "content": "x"}\n')
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            "from memorepair.cli import main; main()",
            "--ns",
            memory.ns,
            "import",
            str(bad),
        ],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        f"error: {bad}:1: arch is required for kind 'skill' (one of neural, prompt, chain)"
    ]
    assert memory.counts()["live"] == 0


def test_demo_refuses_to_clear_a_namespace_with_data(memory: MemoryStore) -> None:
    memory.record({"uid": "precious", "kind": "record", "content": "keep me"})
    result = CliRunner().invoke(cli, ["--ns", memory.ns, "demo"])
    assert result.exit_code != 0
    assert "is not empty" in str(result.exception)
    assert [a.uid for a in memory.retrieve(uid="precious")] == ["precious"]


def test_demo_keeps_its_memory_and_its_printed_next_steps_work_from_any_folder(
    memory: MemoryStore, tmp_path: Path
) -> None:
    """The demo's closing commands name its namespace (where its memory stays until the
    next demo) and run as printed, from an empty folder with a bare environment."""
    demo = subprocess.run(
        [str(MEMOREPAIR), "--ns", memory.ns, "demo"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert demo.returncode == 0, demo.stdout + demo.stderr
    assert "WARNING" not in demo.stderr and "DeadlockDetected" not in demo.stdout + demo.stderr
    tail = demo.stdout.split("Look at it", 1)[1]
    commands = [
        line.strip() for line in tail.splitlines()[1:] if line.startswith(("  /", "  MEMOREPAIR_"))
    ]
    assert len(commands) == 4, demo.stdout
    assert all(f"--ns {memory.ns} " in command for command in commands)
    assert memory.report("sample-delete-hotel").status == "completed"  # still there
    empty = tmp_path / "elsewhere"
    empty.mkdir()
    bare = {"HOME": os.environ["HOME"], "PATH": "/usr/bin:/bin"}
    for command in commands:
        done = subprocess.run(
            ["bash", "-c", command], cwd=empty, env=bare, capture_output=True, text=True
        )
        assert done.returncode == 0, f"{command}\n{done.stdout}{done.stderr}"
    assert (tmp_path / "cascade-sample-delete-hotel.html").is_file()
    assert list(empty.iterdir()) == []
    again = subprocess.run(  # the next demo clears what the last one left, and runs again
        [str(MEMOREPAIR), "--ns", memory.ns, "demo", "--json"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["namespace"] == memory.ns


def test_plan_frontier_and_the_event_files_lambda(memory: MemoryStore, tmp_path: Any) -> None:
    run(memory, "import", str(sample.path("memory.jsonl")), "--json")
    event = sample.path("event-delete.json")
    data = run(memory, "plan", str(event), "--frontier", "--json")
    front = data["frontier"]
    steps = front["steps"]
    assert steps[0]["lambda_from"] == 0 and steps[-1]["lambda_to"] is None
    assert [s["lambda_to"] for s in steps[:-1]] == [s["lambda_from"] for s in steps[1:]]
    assert front["units"] == {"value": "reads", "cost": "seconds", "lambda": "reads per second"}
    (marked,) = [s for s in steps if s["default"]]  # the plan's λ is in exactly one step
    assert marked["selected"] == sum(c["selected"] for c in data["candidates"])
    skipped = [u for s in steps for u in s["skips"]]
    assert sorted(skipped) == sorted(c["uid"] for c in data["candidates"] if c["executable"])
    human = run(memory, "plan", str(event), "--frontier")
    assert "frontier over lambda, in reads per second of repair" in human
    assert sum(line.startswith("  *") for line in human.splitlines()) == 1

    # A λ in the event file is the plan's and the repair's unless --lambda overrides it;
    # one above every breakpoint repairs only what costs nothing.
    dear = steps[-1]["lambda_from"] * 2 + 1
    spec = {**json.loads(event.read_text()), "lambda": dear}
    priced = tmp_path / "priced.json"
    priced.write_text(json.dumps(spec))
    assert run(memory, "plan", str(priced), "--json")["lambda"] == dear
    cheap = run(memory, "plan", str(priced), "--lambda", "0", "--json")
    assert cheap["lambda"] == 0
    assert sum(c["selected"] for c in cheap["candidates"]) == steps[0]["selected"]
    report = run(memory, "repair", str(priced), "--json")
    assert report["lambda"] == dear and report["cost"] == 0
