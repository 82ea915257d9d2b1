"""Change requests as event specs, without a database (`changes.py` is pure)."""

from __future__ import annotations

import pytest

from memorepair import changes
from memorepair.errors import InputError, UnknownArtifactError
from memorepair.model import Artifact, EventType, Kind, Visibility


def _served(uid: str, content: str, **meta: object) -> Artifact:
    return Artifact(
        uid=uid,
        version=3,
        ns="n",
        kind=Kind.RECORD,
        content=content,
        meta=dict(meta),
        visibility=Visibility.LIVE,
    )


def test_an_update_keeps_what_it_does_not_give() -> None:
    change = changes.update("a", content=None, meta={"k": 1}, inputs=None)
    replacement = changes.replacement(change, _served("a", "old text"), "n")
    assert replacement == {"replaces": "a", "content": "old text", "meta": {"k": 1}}
    with pytest.raises(InputError, match="give content, meta or inputs"):
        changes.update("a", content=None, meta=None, inputs=None)


def test_a_correction_is_one_event_with_readable_defaults() -> None:
    replacements = [
        changes.replacement({"uid": u, "content": "new"}, _served(u, "old"), "n")
        for u in ("a", "b")
    ]
    spec = changes.correction(replacements, reason="", event_id=None, erase=True)
    assert spec["type"] == "correct" and spec["roots"] == ["a", "b"] and spec["erase"]
    assert spec["id"].startswith("correct-a-") and spec["reason"] == "correction of a, b"
    parsed = changes.event_spec(spec, "n")
    assert parsed.type is EventType.CORRECT and parsed.ns == "n"


def test_bad_changes_are_refused_naming_the_uid_and_field() -> None:
    with pytest.raises(InputError, match="at least one change"):
        changes.requested([])
    with pytest.raises(InputError, match="string 'uid'"):
        changes.changed_uid({"content": "x"})
    with pytest.raises(InputError, match=r"change of 'a': unknown fields \['colour'\]"):
        changes.changed_uid({"uid": "a", "colour": "red"})
    with pytest.raises(UnknownArtifactError, match="no served version"):
        changes.replacement({"uid": "a", "content": "x"}, None, "n")


def test_a_forget_of_a_uid_never_recorded_is_refused() -> None:
    assert changes.forget_roots("a") == ["a"]
    with pytest.raises(InputError, match="at least one uid"):
        changes.forget_roots([])
    with pytest.raises(UnknownArtifactError, match="never recorded"):
        changes.deletion(["a", "b"], unknown=["b"], ns="n", reason="", event_id=None)
    spec = changes.deletion(["a"], unknown=[], ns="n", reason="gdpr", event_id="e1")
    assert spec == {"id": "e1", "type": "delete", "roots": ["a"], "reason": "gdpr"}


def test_an_event_naming_another_namespace_is_refused() -> None:
    spec = {"id": "e", "type": "delete", "roots": ["a"], "ns": "other"}
    with pytest.raises(InputError, match="names namespace 'other'"):
        changes.event_spec(spec, "n")
    assert changes.event_spec({**spec, "ns": "n"}, "n").ns == "n"


def test_a_migration_takes_the_served_interface_records_of_its_tool() -> None:
    old = {"functions": {"convert": {"params": {"amount": "number"}, "required": ["amount"]}}}
    new = {"functions": {"convert": {"params": {"value": "number"}, "required": ["value"]}}}
    record = changes.interface_record("fx", old, uid=None)
    interface = _served(record["uid"], record["content"], **record["meta"])
    other = _served("note", "mentions fx", tool="other")
    spec, migration = changes.tool_migration(
        "fx", new, [interface, other], ns="n", param_renames={"convert": {"amount": "value"}}
    )
    assert spec["type"] == "migrate" and spec["roots"] == ["tool:fx"]
    assert spec["interface"] == migration.interface.model_dump(mode="json")
    with pytest.raises(UnknownArtifactError, match="no served interface artifact"):
        changes.tool_migration("fx", new, [other], ns="n")
