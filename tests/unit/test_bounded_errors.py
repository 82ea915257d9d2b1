"""Errors stay a line whatever the input's size, and NaN/Infinity are refused everywhere
JSON or numbers come in (memory lines, event files, meta and recipe arguments)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memorepair.errors import CycleError, InputError, some
from memorepair.interchange import index_memory, influence_order, parse_event, parse_lines
from memorepair.model import ArtifactIn, Interface, Recipe, RepairEventSpec
from memorepair.operators.common import parse_json
from memorepair.operators.sandbox import check_call

MANY = 100_000
REFUSED = r"not a JSON number|does not fit a finite number"


def test_some_names_a_few_and_counts_the_rest() -> None:
    assert some(["a"], "unknown root") == "1 unknown root ('a')"
    assert some(["a", "b"], "input") == "2 inputs ('a', 'b')"
    many = some((f"id-{i}" for i in range(MANY)), "unknown root")
    assert many == "100,000 unknown roots (e.g. 'id-0', 'id-1', 'id-2')"
    assert len(some(["x" * 10_000] * 5, "uid")) < 400  # long ids are cut too


def test_a_correct_event_with_100k_mismatched_roots_is_refused_briefly() -> None:
    roots = [f"r{i}" for i in range(MANY)]
    event = {
        "id": "big",
        "type": "correct",
        "roots": roots,
        "replacements": [{"replaces": f"s{i}", "content": "x"} for i in range(MANY)],
    }
    with pytest.raises(InputError) as caught:
        parse_event(json.dumps(event))
    message = str(caught.value)
    assert len(message) < 2048
    assert "no replacement for 100,000 roots (e.g. 'r0'" in message
    assert "100,000 replacements (e.g. 's0'" in message


def test_a_line_with_100k_bad_inputs_is_refused_briefly() -> None:
    line = json.dumps(
        {
            "type": "artifact",
            "uid": "a",
            "kind": "record",
            "content": "x",
            "inputs": ["bad uid"] * MANY,
        }
    )
    with pytest.raises(InputError) as caught:
        parse_lines([line])
    assert len(str(caught.value)) < 2048
    assert "and 99,997 more problems" in str(caught.value)


def test_a_100k_long_cycle_is_named_briefly() -> None:
    lines = [
        json.dumps(
            {
                "type": "artifact",
                "uid": f"n{i}",
                "kind": "cache",
                "content": "x",
                "inputs": [f"n{(i + 1) % MANY}"],
            }
        )
        for i in range(MANY)
    ]
    with pytest.raises(CycleError) as caught:
        influence_order(parse_lines(lines), set())
    assert len(str(caught.value)) < 2048 and "(100,000 artifacts)" in str(caught.value)


def test_check_call_bounds_unknown_parameters() -> None:
    schema = {"f": {"params": {"n": "integer"}, "required": []}}
    problem = check_call(schema, "f", {f"p{i}": 1 for i in range(MANY)})
    assert problem is not None and len(problem) < 300 and "100,000 unknown parameters" in problem


@pytest.mark.parametrize("number", ["NaN", "Infinity", "-Infinity", "1e999"])
def test_non_finite_numbers_are_refused_in_files(tmp_path: Path, number: str) -> None:
    line = (
        '{"type": "artifact", "uid": "a", "kind": "record", "content": "x", '
        f'"meta": {{"w": {number}}}}}'
    )
    with pytest.raises(InputError, match=REFUSED):
        parse_lines([line])
    path = tmp_path / "m.jsonl"
    path.write_text(line + "\n", encoding="utf-8")
    with pytest.raises(InputError, match=REFUSED):
        index_memory(path)
    with pytest.raises(InputError, match=REFUSED):
        parse_event(f'{{"id": "e", "type": "delete", "roots": ["a"], "lambda": {number}}}')
    assert parse_json(f'{{"w": {number}}}')[0] is False  # operators treat it as not JSON


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf")])
def test_non_finite_numbers_are_refused_from_python(bad: float) -> None:
    with pytest.raises(ValueError, match=r"deep\[1\]\.w is .*not a JSON number"):
        ArtifactIn(uid="a", kind="record", content="x", meta={"deep": [1, {"w": bad}]})
    with pytest.raises(ValueError, match="not a JSON number"):
        Recipe(executor="text.join", args={"sep": bad})
    with pytest.raises(ValueError, match="finite"):
        ArtifactIn(uid="a", kind="record", content="x", value=bad)
    with pytest.raises(ValueError, match="not a JSON number"):
        RepairEventSpec.model_validate(
            {
                "id": "e",
                "type": "correct",
                "roots": ["a"],
                "replacements": [{"replaces": "a", "content": "x", "meta": {"w": bad}}],
            }
        )
    assert Interface(tool="t", functions={}).tool == "t"
