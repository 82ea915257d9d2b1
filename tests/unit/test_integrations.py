"""The integrations' pure parts: tool-schema migrations, LangGraph addresses, values and
filters (the latter checked against LangGraph's own in-memory store's semantics)."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from langgraph.store.memory import InMemoryStore

from memorepair.errors import InputError
from memorepair.integrations.langgraph import (
    address_of,
    artifact_of,
    content_of,
    generation_uid,
    matches,
    prefix_of,
    pushed_down,
    uid_of,
    value_of,
)
from memorepair.model import UID_PATTERN, Artifact, ArtifactIn
from memorepair.toolschema import functions_of, infer_params, migration

CONVERT = {
    "name": "convert",
    "inputSchema": {
        "type": "object",
        "properties": {
            "amount": {"type": "number"},
            "from_currency": {"type": "string"},
            "to_currency": {"type": "string"},
        },
        "required": ["amount", "from_currency", "to_currency"],
    },
}
FORMAT = {
    "type": "function",
    "function": {
        "name": "format_amount",
        "parameters": {
            "type": "object",
            "properties": {"amount": {"type": "number"}, "currency": {"type": "string"}},
        },
    },
}


def test_schema_forms_agree() -> None:
    mcp_form = functions_of([CONVERT, FORMAT])
    own_form = functions_of(
        {
            "functions": {
                "convert": {
                    "params": mcp_form["convert"].params,
                    "required": mcp_form["convert"].required,
                },
                "format_amount": {"params": {"amount": "number", "currency": "string"}},
            }
        }
    )
    assert mcp_form == own_form
    assert mcp_form["convert"].params == {
        "amount": "number",
        "from_currency": "string",
        "to_currency": "string",
    }
    nullable = functions_of(
        {
            "f": {
                "properties": {
                    "x": {"type": ["null", "integer"]},
                    "y": {"anyOf": [{"type": "null"}, {"type": "boolean"}]},
                    "z": {"enum": ["a", "b"]},
                }
            }
        }
    )
    assert nullable["f"].params == {"x": "integer", "y": "boolean", "z": "string"}
    with pytest.raises(InputError, match="parameter 'x'"):
        functions_of({"f": {"properties": {"x": {"description": "no type"}}}})


def test_migration_infers_renames_the_sample_event_spells_out() -> None:
    new = [
        {
            **CONVERT,
            "name": "convert_amount",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "value": {"type": "number"},
                    "source": {"type": "string"},
                    "target": {"type": "string"},
                },
                "required": ["value", "source", "target"],
            },
        },
        FORMAT,
    ]
    found = migration("currency", [CONVERT, FORMAT], new)
    assert found.interface.renames == {"convert": "convert_amount"}
    assert found.interface.param_renames == {
        "convert": {"amount": "value", "from_currency": "source", "to_currency": "target"}
    }
    assert found.unmapped == []


def test_migration_leaves_ambiguity_to_the_caller() -> None:
    old = {"f": {"params": {"a": "string", "b": "string", "c": "string"}}}
    new = {"f": {"params": {"x": "string", "y": "string"}}}
    found = migration("t", old, new)
    assert found.interface.param_renames == {}  # 3 strings left, 2 arrived: no guess
    assert len(found.unmapped) == 3
    given_maps = migration("t", old, new, param_renames={"f": {"a": "x", "b": "y"}})
    assert given_maps.inferred["param_renames"] == {}
    assert given_maps.unmapped == ["parameter 'c' of 'f' has no counterpart in the new schema"]
    # a clear name match is taken even when the counts differ
    close = infer_params(
        functions_of({"f": {"params": {"user_id": "string", "note": "string"}}})["f"],
        functions_of({"f": {"params": {"userId": "string"}}})["f"],
    )
    assert close == {"user_id": "userId"}
    with pytest.raises(InputError, match="renames point at functions missing"):
        migration("t", old, new, renames={"f": "nowhere"})


def test_migration_reads_retyped_parameters_off_the_two_schemas() -> None:
    old = {"close": {"params": {"ticket_id": "integer", "note": "string"}}}
    new = {"close_v2": {"params": {"ticket_id": "string", "note": "string"}}}
    found = migration("tickets", old, new)
    assert found.interface.renames == {"close": "close_v2"}
    assert found.interface.retypes == {"close": {"ticket_id": "integer"}}
    renamed = migration(
        "tickets", old, {"close": {"params": {"id": "string", "note": "string"}}},
        param_renames={"close": {"ticket_id": "id"}},
    )  # fmt: skip
    assert renamed.interface.retypes == {"close": {"ticket_id": "integer"}}
    assert migration("tickets", old, old).interface.retypes == {}


LABEL = st.text(min_size=1, max_size=12).filter(lambda s: "." not in s)


@given(st.lists(LABEL, min_size=1, max_size=3), st.text(min_size=1, max_size=12))
def test_addresses_round_trip(namespace: list[str], key: str) -> None:
    if not re.match(r"[A-Za-z0-9]", namespace[0]):
        with pytest.raises(InputError):
            uid_of(namespace, key)
        return
    try:
        uid = uid_of(namespace, key)
    except InputError:  # longer than 200 characters once escaped
        return
    assert re.fullmatch(UID_PATTERN, uid)
    ArtifactIn(uid=uid, kind="record", content="x")  # the model takes it (no '@N' end)
    assert address_of(uid) == (tuple(namespace), key)
    assert uid.startswith(prefix_of(namespace))


def test_foreign_uids_read_as_addresses() -> None:
    assert address_of("tool:currency") == ((), "tool:currency")
    assert address_of("a/b/c") == (("a", "b"), "c")
    assert uid_of(("users", "Zoë"), "k@3") == "users/Zo:C3:AB/k:403"


def test_a_recreated_keys_generations_read_as_the_same_address() -> None:
    uid = uid_of(("users", "ana"), "prefs")
    assert generation_uid(uid, 1) == uid
    assert generation_uid(uid, 2) == "users/ana/prefs:g2"
    assert address_of(generation_uid(uid, 12)) == (("users", "ana"), "prefs")
    escaped = uid_of(("a",), "x:g2")  # a key that looks like one is escaped, so unambiguous
    assert escaped == "a/x:3Ag2" and address_of(escaped) == (("a",), "x:g2")
    with pytest.raises(InputError, match="cannot be re-created"):
        generation_uid("a/" + "k" * 197, 2)


def artifact(content: str, meta: dict[str, Any]) -> Artifact:
    return Artifact(
        uid="u", version=1, ns="n", kind="record", content=content, meta=meta, visibility="Live"
    )


def test_values_round_trip_through_content_and_meta() -> None:
    text_value = {"content": "Ana likes tea.", "topic": "food", "inputs": ["x@1"]}
    content, meta = content_of(text_value)
    assert (content, meta) == ("Ana likes tea.", {"topic": "food"})
    assert value_of(artifact(content, meta)) == {"content": "Ana likes tea.", "topic": "food"}
    json_value = {"content": {"name": "Ana"}, "rating": 4}
    content, meta = content_of(json_value)
    assert value_of(artifact(content, meta)) == json_value
    # a repair rewrote the JSON content as text: the text is what is served
    assert value_of(artifact("- Ana. [u@v1]", meta)) == {"rating": 4, "content": "- Ana. [u@v1]"}
    made = artifact_of("a/b", {"content": "s", "inputs": [["a", "c"], "d@2"]})
    assert made["kind"] == "summary" and made["inputs"] == ["a/c", "d@2"]
    assert artifact_of("a/b", {"content": "s"})["kind"] == "record"
    skill = artifact_of("a/b", {"content": "s", "memorepair": {"kind": "skill", "arch": "prompt"}})
    assert (skill["kind"], skill["arch"]) == ("skill", "prompt")
    with pytest.raises(InputError, match="takes only"):
        artifact_of("a/b", {"content": "s", "memorepair": {"color": "red"}})


VALUES = [
    {"stars": 4, "city": "Basel", "tags": ["a", "b"], "nested": {"x": 1}},
    {"stars": 7.5, "city": "Zurich"},
    {"city": "Bern", "stars": 2},
]
FILTERS = [
    {"city": "Basel"},
    {"stars": {"$gte": 4}},
    {"stars": {"$gt": 4, "$lt": 8}},
    {"stars": {"$lte": 4}},
    {"city": {"$ne": "Basel"}},
    {"city": {"$eq": "Zurich"}},
    {"tags": ["a", "b"]},
    {"nested": {"x": 1}},
    {"city": "Basel", "stars": {"$lt": 5}},
]


@pytest.mark.parametrize("conditions", FILTERS)
def test_filters_match_langgraphs_in_memory_store(conditions: dict[str, Any]) -> None:
    reference = InMemoryStore()
    for n, value in enumerate(VALUES):
        reference.put(("ns",), str(n), value)
    expected = {int(item.key) for item in reference.search(("ns",), filter=conditions, limit=10)}
    assert {n for n, value in enumerate(VALUES) if matches(value, conditions)} == expected


def test_a_missing_field_passes_no_order_condition() -> None:
    # LangGraph's in-memory store raises TypeError here; the item simply does not pass
    assert not matches({"city": "Bern"}, {"stars": {"$gte": 0}})
    assert matches({"city": "Bern"}, {"stars": {"$ne": 3}})


def test_only_exact_equalities_are_pushed_into_search() -> None:
    conditions = {
        "city": "Basel",
        "topic": {"$eq": "x"},
        "stars": 4,
        "flag": True,
        "other": "y",
        "rank": {"$gt": 1},
    }
    assert pushed_down(conditions, ["city", "topic", "stars", "flag", "rank"]) == {
        "city": "Basel",
        "topic": "x",
        "flag": True,
    }
    with pytest.raises(InputError, match="not supported"):
        matches({"a": 1}, {"a": {"$in": [1]}})
