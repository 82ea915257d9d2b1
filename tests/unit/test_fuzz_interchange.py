"""Property tests: whatever bytes arrive, the importer and the event parser either parse
them or raise `InputError` (`CycleError` is one) naming the problem. Nothing else escapes.
"""

from __future__ import annotations

import json
import math
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memorepair.errors import InputError
from memorepair.interchange import Memory, influence_order, parse_event, parse_lines

FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])

UIDS = st.sampled_from(["a", "b", "c", "d", "e", "x y", "", "a'})//", "ü", "a" * 201])
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=20),
)
JSON = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)


@st.composite
def artifact_lines(draw: st.DrawFn) -> dict[str, Any]:
    """Mostly well-formed artifact or edge objects, with fields swapped for junk."""
    if draw(st.booleans()):
        obj: dict[str, Any] = {
            "type": "artifact",
            "uid": draw(UIDS),
            "kind": draw(st.sampled_from(["record", "cache", "summary", "skill", "Live", 3])),
            "content": draw(st.one_of(st.text(max_size=30), JSON)),
            "inputs": draw(st.lists(UIDS, max_size=3)),
        }
        if draw(st.booleans()):
            obj["arch"] = draw(st.sampled_from(["neural", "prompt", "chain", "x", None]))
        if draw(st.booleans()):
            obj["value"] = draw(SCALARS)
        if draw(st.booleans()):
            obj["repair_cost"] = draw(SCALARS)
        if draw(st.booleans()):
            obj["recipe"] = draw(
                st.one_of(
                    JSON,
                    st.fixed_dictionaries(
                        {"executor": st.sampled_from(["text.join", "X", "a b"]), "args": JSON}
                    ),
                )
            )
        if draw(st.booleans()):
            obj["meta"] = draw(JSON)
    else:
        obj = {
            "type": "edge",
            "src": draw(UIDS),
            "dst": draw(UIDS),
            "rel": draw(st.sampled_from(["INFLUENCES", "RELATED", "X]->() DELETE n //"])),
        }
    if draw(st.integers(0, 9)) == 0:
        obj[draw(st.text(max_size=8))] = draw(JSON)
    return obj


def _dump(obj: Any) -> str:
    return json.dumps(obj, allow_nan=True)


LINE = st.one_of(
    st.text(max_size=60),
    JSON.map(_dump),
    artifact_lines().map(_dump),
    st.sampled_from(["[" * 5000, "{" * 3000, "9" * 5000, "NaN", "-Infinity", "\x00", "\ud800"]),
)


def _import(lines: list[str], known: set[str]) -> Memory:
    memory = parse_lines(lines, "fuzz.jsonl")
    influence_order(memory, known)
    return memory


@FUZZ
@given(st.lists(LINE, max_size=8), st.sets(UIDS, max_size=3))
def test_importer_raises_only_input_errors(lines: list[str], known: set[str]) -> None:
    try:
        _import(lines, known)
    except InputError as exc:
        assert str(exc)  # every refusal says what is wrong


@FUZZ
@given(st.lists(artifact_lines(), min_size=1, max_size=10), st.sets(UIDS, max_size=3))
def test_importer_on_structured_lines(objs: list[dict[str, Any]], known: set[str]) -> None:
    try:
        memory = _import([_dump(o) for o in objs], known)
    except InputError as exc:
        assert str(exc)
        return
    for artifact in memory.artifacts:  # what passes is sound
        for number in (artifact.value, artifact.repair_cost):
            assert number is None or (math.isfinite(number) and number >= 0)


@st.composite
def events(draw: st.DrawFn) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "id": draw(st.sampled_from(["e1", "e 1", "", "x" * 200, "e'}) //"])),
        "type": draw(st.sampled_from(["delete", "correct", "migrate", "drop", 1])),
        "roots": draw(st.one_of(st.lists(UIDS, max_size=3), JSON)),
    }
    if draw(st.booleans()):
        obj["lambda"] = draw(SCALARS)
    if draw(st.booleans()):
        obj["replacements"] = draw(
            st.one_of(
                JSON,
                st.lists(
                    st.fixed_dictionaries({"replaces": UIDS, "content": st.text(max_size=5)}),
                    max_size=3,
                ),
            )
        )
    if draw(st.booleans()):
        obj["interface"] = draw(
            st.one_of(
                JSON,
                st.fixed_dictionaries(
                    {
                        "tool": st.sampled_from(["t", "1t", "t;DROP"]),
                        "functions": st.dictionaries(
                            st.text(max_size=4),
                            st.fixed_dictionaries(
                                {
                                    "params": st.dictionaries(
                                        st.text(max_size=4),
                                        st.sampled_from(["string", "number", "blob"]),
                                        max_size=2,
                                    )
                                }
                            ),
                            max_size=2,
                        ),
                        "renames": st.dictionaries(
                            st.text(max_size=4), st.text(max_size=4), max_size=2
                        ),
                    }
                ),
            )
        )
    if draw(st.booleans()):
        obj["ns"] = draw(st.sampled_from(["default", "a b", "ns-1", ""]))
    return obj


@FUZZ
@given(
    st.one_of(
        st.text(max_size=80),
        JSON.map(_dump),
        events().map(_dump),
        st.sampled_from(["[" * 5000, "{" * 3000, "1" * 5000, "NaN"]),
    )
)
def test_event_parser_raises_only_input_errors(raw: str) -> None:
    try:
        spec = parse_event(raw, "fuzz-event.json")
    except InputError as exc:
        assert str(exc)
        return
    assert spec.lam is None or (math.isfinite(spec.lam) and 0 <= spec.lam <= 1e9)
    assert len(set(spec.roots)) == len(spec.roots) >= 1
