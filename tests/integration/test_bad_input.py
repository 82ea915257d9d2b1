"""Bad input: every refusal names the item at fault and leaves the namespace untouched.

Each bad memory file starts with valid lines, so a half-write would show in the counts.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from reliability_support import SAMPLE, run_cli, sample_event, write_event

from memorepair.api import MemoryStore, open_store
from memorepair.errors import CycleError, InputError, UnknownArtifactError
from memorepair.settings import Settings

GOOD = [
    {"type": "artifact", "uid": "new-a", "kind": "record", "content": "fresh"},
    {"type": "artifact", "uid": "new-b", "kind": "summary", "content": "s", "inputs": ["new-a"]},
]


def art(uid: str, **fields: Any) -> dict[str, Any]:
    return {"type": "artifact", "uid": uid, "kind": "record", "content": "x", **fields}


INJECT = "x'}) MATCH (n) DETACH DELETE n //"

#: (case, extra JSON lines or raw text lines, expected words in the message)
BAD_MEMORY: list[tuple[str, list[Any], list[str]]] = [
    ("malformed JSON", ['{"type": "artifact", "uid": '], ["bad.jsonl:3", "not valid JSON"]),
    ("not an object", ["[1, 2]"], ["bad.jsonl:3", "expected a JSON object"]),
    ("unknown line type", [{"type": "node", "uid": "z"}], ["bad.jsonl:3", "field 'type'"]),
    ("duplicate uid", [art("dup"), art("dup")], ["bad.jsonl:4", "'dup'", "line 3"]),
    ("uid already stored", [art("turn-01")], ["line 3", "'turn-01'", "already exists"]),
    ("input to a missing node", [art("z", inputs=["ghost"])], ["'z'", "'ghost'"]),
    (
        "edge to a missing node",
        [{"type": "edge", "src": "new-a", "dst": "ghost", "rel": "RELATED"}],
        ["unknown artifact 'ghost'"],
    ),
    (
        "influence edge into the store",
        [{"type": "edge", "src": "new-a", "dst": "turn-01"}],
        ["'new-a' -> 'turn-01'", "target must be an artifact of this file"],
    ),
    (
        "cycle",
        [art("cy-1", inputs=["cy-2"]), art("cy-2", inputs=["cy-1"])],
        ["cycle", "cy-1", "cy-2"],
    ),
    (
        "cycle by edge lines",
        [art("e1"), art("e2", inputs=["e1"]), {"type": "edge", "src": "e2", "dst": "e1"}],
        ["cycle", "e1", "e2"],
    ),
    ("self input", [art("me", inputs=["me"])], ["'me' lists itself as an input"]),
    ("negative value", [art("neg", value=-1)], ["field 'value'", "finite number >= 0"]),
    (
        "NaN cost",
        [
            '{"type": "artifact", "uid": "nan", "kind": "record", "content": "x", '
            '"repair_cost": NaN}'
        ],
        ["NaN is not a JSON number"],
    ),
    (
        "Infinity in meta",
        [
            '{"type": "artifact", "uid": "inf", "kind": "record", "content": "x", '
            '"meta": {"w": -Infinity}}'
        ],
        ["-Infinity is not a JSON number"],
    ),
    (
        "overflowing number",
        ['{"type": "artifact", "uid": "big", "kind": "record", "content": "x", "value": 1e999}'],
        ["1e999 does not fit a finite number"],
    ),
    (
        "infinite value",
        ['{"type": "artifact", "uid": "inf", "kind": "record", "content": "x", "value": Infinity}'],
        ["Infinity is not a JSON number"],
    ),
    ("huge cost", [art("dear", repair_cost=1e12)], ["field 'repair_cost'", "at most 1e+06"]),
    ("content of the wrong type", [art("ty", content=123)], ["field 'content'"]),
    ("inputs of the wrong type", [art("ty", inputs="new-a")], ["field 'inputs'"]),
    ("unknown kind", [art("k", kind="memo")], ["field 'kind'"]),
    ("skill without arch", [art("sk", kind="skill")], ["arch is required"]),
    (
        "oversized content",
        [art("big", content="x" * 1_000_001)],
        ["'big'", "1000001 bytes", "MEMOREPAIR_MAX_CONTENT_BYTES"],
    ),
    ("uid injecting Cypher", [art(INJECT)], ["field 'uid'", "pattern"]),
    ("kind injecting a label", [art("lbl", kind="record:Live")], ["field 'kind'"]),
    (
        "forged visibility property",
        [art("forged", visibility="Live")],
        ["field 'visibility'", "Extra inputs are not permitted"],
    ),
    (
        "property name injecting Cypher",
        [art("prop", **{"`x`: 1}) SET n:Live //": 1})],
        ["Extra inputs are not permitted"],
    ),
    (
        "relationship type injection",
        [
            {
                "type": "edge",
                "src": "new-a",
                "dst": "new-b",
                "rel": "INFLUENCES]->(x) DETACH DELETE x //",
            }
        ],
        ["field 'rel'"],
    ),
    (
        "executor injection",
        [art("rc", kind="cache", recipe={"executor": INJECT})],
        ["field 'recipe.executor'"],
    ),
    ("input uid injection", [art("inj", inputs=[INJECT])], ["field 'inputs.0'"]),
]


def _snapshot(memory: MemoryStore) -> tuple[dict[str, int], int]:
    return memory.counts(), len(memory.audit_events())


@pytest.fixture
def sample(memory: MemoryStore) -> MemoryStore:
    memory.import_file(SAMPLE / "memory.jsonl")
    return memory


@pytest.fixture(scope="module")
def shared(neo4j_settings: Settings) -> Iterator[MemoryStore]:
    """One sample namespace for the refusals (each checks that nothing changed)."""
    store = open_store(ns=f"bad{uuid.uuid4().hex[:10]}", settings=neo4j_settings)
    try:
        store.import_file(SAMPLE / "memory.jsonl")
        yield store
    finally:
        store.clear()
        store.close()


@pytest.mark.parametrize(("case", "lines", "words"), BAD_MEMORY, ids=[c[0] for c in BAD_MEMORY])
def test_bad_memory_file_is_refused_whole(
    shared: MemoryStore, tmp_path: Path, case: str, lines: list[Any], words: list[str]
) -> None:
    path = tmp_path / "bad.jsonl"
    text = [json.dumps(x) for x in GOOD] + [
        x if isinstance(x, str) else json.dumps(x) for x in lines
    ]
    path.write_text("\n".join(text) + "\n", encoding="utf-8")
    before = _snapshot(shared)
    with pytest.raises(InputError) as caught:
        shared.import_file(path)
    message = str(caught.value)
    for word in words:
        assert word in message, f"{case}: {word!r} not in {message!r}"
    assert "\n" not in message
    assert _snapshot(shared) == before, f"{case}: something was written"
    assert shared.retrieve(uid="new-a") == []
    assert shared.stale_served() == []


def test_cycle_is_a_cycle_error(shared: MemoryStore, tmp_path: Path) -> None:
    path = tmp_path / "cycle.jsonl"
    path.write_text(
        "\n".join(json.dumps(x) for x in [art("p", inputs=["q"]), art("q", inputs=["p"])]),
        encoding="utf-8",
    )
    with pytest.raises(CycleError, match=r"p -> q -> p|q -> p -> q"):
        shared.import_file(path)


def test_bad_records(shared: MemoryStore) -> None:
    before = _snapshot(shared)
    cases: list[tuple[dict[str, Any], type[Exception], str]] = [
        (
            {"uid": "r1", "kind": "summary", "content": "s", "inputs": ["ghost"]},
            UnknownArtifactError,
            "1 input ('ghost') not current artifacts",
        ),
        ({"uid": "turn-01", "kind": "record", "content": "again"}, InputError, "already exists"),
        ({"uid": INJECT, "kind": "record", "content": "x"}, InputError, "uid"),
        (
            {"uid": "r2", "kind": "record", "content": "x", "value": float("nan")},
            InputError,
            "value",
        ),
        (
            {"uid": "r3", "kind": "record", "content": "x" * 1_000_001},
            InputError,
            "MEMOREPAIR_MAX_CONTENT_BYTES",
        ),
    ]
    for artifact, error, words in cases:
        with pytest.raises(error, match=re.escape(words)):
            shared.record(artifact)
    assert _snapshot(shared) == before


BAD_EVENTS: list[tuple[str, Any, str]] = [
    (
        "unknown root",
        {"id": "e-unknown", "type": "delete", "roots": ["ghost"]},
        "1 unknown root ('ghost')",
    ),
    (
        "duplicate roots",
        {"id": "e-dup", "type": "delete", "roots": ["turn-01", "turn-01"]},
        "roots lists a uid twice",
    ),
    ("unknown type", {"id": "e-type", "type": "drop", "roots": ["turn-01"]}, "field 'type'"),
    (
        "correct without replacement",
        {"id": "e-c", "type": "correct", "roots": ["turn-01"]},
        "needs exactly one replacement per root",
    ),
    (
        "migrate without interface",
        {"id": "e-m", "type": "migrate", "roots": ["turn-01"]},
        "needs an 'interface'",
    ),
    (
        "negative lambda",
        {"id": "e-l", "type": "delete", "roots": ["turn-01"], "lambda": -1},
        "lambda must be a finite number",
    ),
    (
        "huge lambda",
        {"id": "e-h", "type": "delete", "roots": ["turn-01"], "lambda": 1e300},
        "lambda must be a finite number in [0, 1e9]",
    ),
    (
        "roots of the wrong type",
        {"id": "e-r", "type": "delete", "roots": "turn-01"},
        "field 'roots'",
    ),
    ("no roots", {"id": "e-n", "type": "delete", "roots": []}, "field 'roots'"),
    ("id injecting Cypher", {"id": INJECT, "type": "delete", "roots": ["turn-01"]}, "field 'id'"),
    (
        "root injecting Cypher",
        {"id": "e-i", "type": "delete", "roots": [INJECT]},
        "field 'roots.0'",
    ),
    (
        "other namespace",
        {"id": "e-ns", "type": "delete", "roots": ["turn-01"], "ns": "other"},
        "names namespace 'other'",
    ),
    ("not JSON", "{not json", "not valid JSON"),
    ("not an object", "[1]", "an event is a JSON object"),
    ("too deep", "[" * 5000, "JSON not accepted"),
]


@pytest.mark.parametrize(("case", "event", "words"), BAD_EVENTS, ids=[c[0] for c in BAD_EVENTS])
def test_bad_event_is_refused_before_the_barrier(
    shared: MemoryStore, tmp_path: Path, case: str, event: Any, words: str
) -> None:
    path = tmp_path / "event.json"
    path.write_text(event if isinstance(event, str) else json.dumps(event), encoding="utf-8")
    before = shared.counts()
    with pytest.raises(InputError) as caught:
        shared.repair(path)
    assert words in str(caught.value), str(caught.value)
    assert shared.counts() == before
    assert shared.stale_served() == []
    # nothing is left open: a refused event never holds a cascade
    assert all(e["status"] != "open" for e in shared.audit_events())


def test_bad_lambda_override_is_refused_before_anything_is_written(
    sample: MemoryStore, tmp_path: Path
) -> None:
    event = sample_event("delete", "lam-override", tmp_path)
    before = _snapshot(sample)
    for lam in [float("nan"), -1.0, float("inf"), 1e300]:
        with pytest.raises(InputError, match="lambda must be a finite number"):
            sample.repair(event, lam=lam)
        with pytest.raises(InputError, match="lambda must be a finite number"):
            sample.plan(event, lam=lam)
    assert _snapshot(sample) == before
    assert sample.repair(event).status == "completed"  # the same event, sane lambda


def test_largest_lambda_and_cost_still_select(memory: MemoryStore) -> None:
    """The bounds meet: lambda 1e9 times cost 1e6 is accepted by the exact selector."""
    memory.import_items([])
    memory.record({"uid": "src", "kind": "record", "content": "a"})
    memory.record(
        {
            "uid": "sum",
            "kind": "summary",
            "content": "b",
            "inputs": ["src"],
            "repair_cost": 1e6,
            "value": 1e6,
        }
    )
    report = memory.repair({"id": "max", "type": "delete", "roots": ["src"], "lambda": 1e9})
    assert report.status == "completed"


def test_bad_namespace_is_refused(neo4j_settings: Settings) -> None:
    for ns in ["a b", "x'}) DETACH DELETE n //", "-lead", "n" * 65]:
        with pytest.raises(InputError, match="namespace"):
            open_store(ns=ns, settings=neo4j_settings)


# ---- through the command line --------------------------------------------------------------
def _one_line(stderr: str) -> str:
    """The one error line (progress lines may precede it on stderr)."""
    errors = [line for line in stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1 and stderr.rstrip().endswith(errors[0]), stderr
    return errors[0]


def test_cli_refuses_with_one_line_and_exit_2(sample: MemoryStore, tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text(
        json.dumps(GOOD[0]) + "\n" + json.dumps(art("z", inputs=["ghost"])) + "\n", encoding="utf-8"
    )
    unknown = write_event(tmp_path, {"id": "cli-unknown", "type": "delete", "roots": ["ghost"]})
    delete = sample_event("delete", "cli-delete", tmp_path)
    before = _snapshot(sample)
    cases = [
        (["import", str(bad)], "'ghost'"),
        (["repair", str(unknown)], "1 unknown root ('ghost')"),
        (["repair", str(delete), "--lambda", "nan"], "lambda must be a finite number"),
        (["plan", str(delete), "--lambda", "-3"], "lambda must be a finite number"),
        (["--ns", "a b", "status"], "namespace 'a b' is not valid"),
    ]
    for args, words in cases:
        done = run_cli(sample.ns, *args)
        assert done.returncode == 2, (args, done.stdout, done.stderr)
        line = _one_line(done.stderr)
        assert line.startswith("error: ") and words in line, (args, line)
        assert "Traceback" not in done.stderr
    missing = run_cli(sample.ns, "repair", str(tmp_path / "nope.json"))
    assert missing.returncode == 2 and "does not exist" in missing.stderr
    counts, _events = _snapshot(sample)
    assert counts == before[0]
    # the refused unknown-root event is recorded as failed (audit), never left open
    assert all(e["status"] != "open" for e in sample.audit_events())
