"""Import lines and event files: every error names the line and field; nothing half-parsed."""

from __future__ import annotations

import json

import pytest

from memorepair.errors import CycleError, InputError
from memorepair.interchange import influence_order, parse_event, parse_lines


def art(uid: str, **fields: object) -> str:
    return json.dumps({"type": "artifact", "uid": uid, "kind": "record", "content": "x", **fields})


def test_valid_memory_orders_inputs_first() -> None:
    memory = parse_lines(
        [
            art("sum", kind="summary", inputs=["a", "b"]),
            art("a"),
            "",
            art("b"),
            json.dumps({"type": "edge", "src": "a", "dst": "b", "rel": "RELATED"}),
        ]
    )
    order = [a.uid for a in influence_order(memory, known=set())]
    assert order.index("sum") > order.index("a") and order.index("sum") > order.index("b")
    assert memory.lines == {"sum": 1, "a": 2, "b": 4}


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("{not json", "not valid JSON"),
        ("[1, 2]", "expected a JSON object"),
        (json.dumps({"type": "node", "uid": "a"}), "field 'type' must be 'artifact' or 'edge'"),
        (art("a", kind="skill"), "arch is required for kind 'skill'"),
        (art("a", value=-1), "field 'value'"),
        (art("a", repair_cost="NaN"), "field 'repair_cost'"),
        (art("a b"), "field 'uid'"),
        (art("a`) DETACH DELETE n //"), "field 'uid'"),
        (art("a", inputs=["a"]), "lists itself as an input"),
        (art("a", colour="red"), "field 'colour'"),
        (art("a", content=5), "field 'content'"),
    ],
)
def test_bad_lines_name_line_and_field(line: str, message: str) -> None:
    with pytest.raises(InputError, match=r"memory\.jsonl:1: ") as info:
        parse_lines([line], "memory.jsonl")
    assert message in str(info.value)


def test_a_line_without_type_is_an_artifact() -> None:
    line = json.dumps({"uid": "a", "kind": "record", "content": "x"})
    memory = parse_lines(
        [line, json.dumps({"uid": "s", "kind": "summary", "content": "y", "inputs": ["a"]})]
    )
    assert [a.uid for a in influence_order(memory, known=set())] == ["a", "s"]


def test_duplicate_uid_names_both_lines() -> None:
    with pytest.raises(InputError, match=r"memory.jsonl:3: uid 'a' already defined on line 1"):
        parse_lines([art("a"), art("b"), art("a")], "memory.jsonl")


def test_dangling_input_and_cycle_are_refused() -> None:
    with pytest.raises(InputError, match="input 'ghost'"):
        influence_order(parse_lines([art("a", inputs=["ghost"])]), known=set())
    assert influence_order(parse_lines([art("a", inputs=["ghost"])]), known={"ghost"})
    cyclic = parse_lines([art("a", inputs=["c"]), art("b", inputs=["a"]), art("c", inputs=["b"])])
    with pytest.raises(CycleError, match=r"a -> b -> c -> a|b -> c -> a -> b|c -> a -> b -> c"):
        influence_order(cyclic, known=set())


def test_influence_edge_line_must_target_the_file() -> None:
    memory = parse_lines([art("a"), json.dumps({"type": "edge", "src": "a", "dst": "old"})])
    with pytest.raises(InputError, match="the target must be an artifact of this file"):
        influence_order(memory, known={"old"})


@pytest.mark.parametrize(
    ("event", "message"),
    [
        ({"id": "e", "type": "delete", "roots": []}, "roots"),
        ({"id": "e", "type": "delete", "roots": ["a", "a"]}, "roots lists a uid twice"),
        ({"id": "e", "type": "correct", "roots": ["a"]}, "one replacement per root"),
        ({"id": "e", "type": "migrate", "roots": ["a"]}, "needs an 'interface'"),
        ({"id": "e", "type": "delete", "roots": ["a"], "lambda": 1e300}, "lambda"),
        ({"id": "e", "type": "delete", "roots": ["a"], "lambda": -1}, "lambda"),
        ({"id": "e", "type": "purge", "roots": ["a"]}, "field 'type'"),
        ({"id": "e; DROP", "type": "delete", "roots": ["a"]}, "field 'id'"),
    ],
)
def test_bad_events_are_named(event: dict[str, object], message: str) -> None:
    with pytest.raises(InputError, match=r"event\.json") as info:
        parse_event(json.dumps(event), "event.json")
    assert message in str(info.value)


def test_event_file_must_be_json_object() -> None:
    with pytest.raises(InputError, match="not valid JSON"):
        parse_event("{", "e.json")
    with pytest.raises(InputError, match="JSON object"):
        parse_event("[]", "e.json")
