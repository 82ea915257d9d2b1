from __future__ import annotations

import json
from typing import Any

import pytest
from operator_support import (
    HogBackend,
    SpinBackend,
    TicketBackend,
    TicketBackendV2,
    art,
    as_artifact,
    ctx,
    registry,
    sup,
    ticket_retype,
)
from pydantic import ValidationError

from memorepair.model import Arch, EventType, FunctionSpec, Interface, Kind
from memorepair.operators.base import Successor
from memorepair.operators.chain import ChainOperator, chain_from_calls, chain_json
from memorepair.operators.common import OperatorError, convert_value, migrate_call
from memorepair.operators.registry import OperatorRegistry
from memorepair.operators.sandbox import check_chain
from memorepair.sample.tools import CurrencyBackend, CurrencyBackendV2, currency_migration
from memorepair.settings import OperatorConfig

REG = registry()
OP = ChainOperator(REG)


def call(uid: str, function: str, args: dict[str, Any], tool: str = "currency") -> Any:
    return sup(
        uid, f"called {function}", meta={"tool": tool, "call": {"function": function, "args": args}}
    )


C1 = call("c1", "convert", {"amount": 900, "from_currency": "EUR", "to_currency": "USD"})
C2 = call("c2", "format_amount", {"amount": 972.0, "currency": "USD"})
C3 = call("c3", "convert", {"amount": 50, "from_currency": "EUR", "to_currency": "GBP"})
NOTE = sup("n1", "User asked about prices.")
OLD = chain_from_calls([C1, C2], "currency")
SKILL = art("chain-fx", OLD, kind=Kind.SKILL, arch=Arch.CHAIN, inputs=["c1", "c2", "c3"])


def test_chain_from_calls_format() -> None:
    assert json.loads(OLD) == {
        "tool": "currency",
        "steps": [
            {
                "function": "convert",
                "args": {"amount": 900, "from_currency": "EUR", "to_currency": "USD"},
            },
            {"function": "format_amount", "args": {"amount": 972.0, "currency": "USD"}},
        ],
    }
    assert chain_from_calls([C1, NOTE, C2, call("o", "x", {}, tool="other")], "currency") == OLD


def test_delete_rebuilds_from_retained_calls() -> None:
    c = ctx(SKILL, [C1, NOTE, C2], [as_artifact(C3), SKILL])
    s = OP.build(c)
    assert s == OP.build(c)
    assert s.content == OLD and s.inputs == ("c1", "c2")
    assert OP.validate(c, s).ok


def test_step_from_invalidated_record_fails() -> None:
    c = ctx(SKILL, [C1, C2], [as_artifact(C3)])
    tampered = chain_from_calls([C1, C2, C3], "currency")
    verdict = OP.validate(c, Successor(tampered, ("c1", "c2")))
    assert not verdict.ok and "invalidated record 'c3'" in verdict.reason


def test_step_not_in_support_fails() -> None:
    c = ctx(SKILL, [C1, C2], [])
    invented = chain_json(
        "currency", [{"function": "format_amount", "args": {"amount": 1, "currency": "USD"}}]
    )
    verdict = OP.validate(c, Successor(invented, ("c1",)))
    assert not verdict.ok and "not in the support" in verdict.reason


def migrate_ctx() -> Any:
    return ctx(SKILL, [C1, C2], [SKILL], event=EventType.MIGRATE, interface=currency_migration())


def test_migrated_chain_passes_and_stale_chain_fails() -> None:
    c = migrate_ctx()
    s = OP.build(c)
    steps = json.loads(s.content)["steps"]
    assert steps[0] == {
        "function": "convert_amount",
        "args": {"value": 900, "source": "EUR", "target": "USD"},
    }
    assert steps[1]["function"] == "format_amount"
    assert OP.validate(c, s).ok
    stale = OP.validate(c, Successor(OLD, s.inputs))
    assert not stale.ok and "'convert' is not in the interface" in stale.reason


def test_wrong_param_type_fails_in_sandbox() -> None:
    bad_call = call(
        "c9", "convert", {"amount": "900", "from_currency": "EUR", "to_currency": "USD"}
    )
    c = ctx(SKILL, [bad_call], [])
    s = OP.build(c)
    verdict = OP.validate(c, s)
    assert not verdict.ok and "'amount' should be number" in verdict.reason


def test_runtime_failure_fails() -> None:
    bad_call = call("c8", "convert", {"amount": 1, "from_currency": "EUR", "to_currency": "XXX"})
    c = ctx(SKILL, [bad_call], [])
    verdict = OP.validate(c, OP.build(c))
    assert not verdict.ok and "unknown currency 'XXX'" in verdict.reason


def test_no_retained_calls_cannot_build() -> None:
    with pytest.raises(OperatorError, match="no retained tool-call records"):
        OP.build(ctx(SKILL, [NOTE], [as_artifact(C1)]))


def test_unknown_tool_fails_unless_allowed() -> None:
    reg = OperatorRegistry()
    op = ChainOperator(reg)
    c = ctx(SKILL, [C1], [])
    s = op.build(c)
    assert "no interface or back-end" in op.validate(c, s).reason
    unchecked = ChainOperator(reg, OperatorConfig(chain_allow_unchecked=True))
    assert unchecked.validate(c, s).ok


def test_endless_step_is_killed_by_timeout() -> None:
    reg = OperatorRegistry()
    reg.register_backend(SpinBackend())
    op = ChainOperator(reg, OperatorConfig(chain_timeout_s=1.0))
    spin = call("s1", "spin", {}, tool="spin")
    skill = art("chain-spin", chain_from_calls([spin], "spin"), kind=Kind.SKILL, arch=Arch.CHAIN)
    c = ctx(skill, [spin], [])
    verdict = op.validate(c, op.build(c))
    assert not verdict.ok and "timed out" in verdict.reason


def test_memory_hog_is_stopped() -> None:
    reg = OperatorRegistry()
    reg.register_backend(HogBackend())
    op = ChainOperator(reg, OperatorConfig(chain_memory_mb=512))
    hog = call("h1", "hog", {}, tool="hog")
    skill = art("chain-hog", chain_from_calls([hog], "hog"), kind=Kind.SKILL, arch=Arch.CHAIN)
    c = ctx(skill, [hog], [])
    verdict = op.validate(c, op.build(c))
    assert not verdict.ok and "MemoryError" in verdict.reason


def test_sandbox_checks_in_process() -> None:
    schema = {
        "f": {"params": {"n": "integer", "flag": "boolean"}, "required": ["n"]},
    }

    def run(steps: list[dict[str, Any]]) -> dict[str, Any]:
        return check_chain(
            {"chain": {"tool": "t", "steps": steps}, "schema": schema, "backend": None}
        )

    assert run([{"function": "f", "args": {"n": 1}}])["ok"]
    assert "missing" in run([{"function": "f", "args": {}}])["reason"]
    assert "unknown parameter" in run([{"function": "f", "args": {"n": 1, "x": 2}}])["reason"]
    assert "should be integer" in run([{"function": "f", "args": {"n": True}}])["reason"]
    assert "not an earlier step" in run([{"function": "f", "args": {"n": "$step:0"}}])["reason"]


def test_step_references_run_on_backend() -> None:
    job = {
        "chain": {
            "tool": "currency",
            "steps": [
                {
                    "function": "convert_amount",
                    "args": {"value": 100, "source": "EUR", "target": "GBP"},
                },
                {"function": "format_amount", "args": {"amount": "$step:0", "currency": "GBP"}},
            ],
        },
        "schema": {n: s.model_dump() for n, s in CurrencyBackendV2().schema().functions.items()},
        "backend": {"module": "memorepair.sample.tools", "attr": "CurrencyBackendV2"},
    }
    assert check_chain(job) == {"ok": True, "reason": "", "steps_run": 2}


def test_demo_backends_reject_each_others_names() -> None:
    v1, v2 = CurrencyBackend(), CurrencyBackendV2()
    assert (
        v1.call("convert", {"amount": 100, "from_currency": "EUR", "to_currency": "USD"}, {})
        == 108.0
    )
    assert v2.call("convert_amount", {"value": 100, "source": "EUR", "target": "USD"}, {}) == 108.0
    assert v2.call("format_amount", {"amount": 1234.5, "currency": "usd"}, {}) == "1,234.50 USD"
    with pytest.raises(KeyError):
        v2.call("convert", {"amount": 1, "from_currency": "EUR", "to_currency": "USD"}, {})
    with pytest.raises(KeyError):
        v1.call("convert_amount", {"value": 1, "source": "EUR", "target": "USD"}, {})
    with pytest.raises(TypeError):
        v2.call("convert_amount", {"amount": 1, "source": "EUR", "target": "USD"}, {})
    assert set(currency_migration().functions) == set(v2.schema().functions)


def test_migration_converts_retyped_values() -> None:
    """A migration that retyped a parameter: the regenerated chain carries the value in
    the new type (2 -> "2"), validates on the new back-end, and a second rewrite changes
    nothing. Without the conversion the step failed as 'should be string, got int'."""
    reg = registry()
    reg.register_backend(TicketBackend())
    reg.register_backend(TicketBackendV2())
    op = ChainOperator(reg)
    closing = call("t1", "close_ticket", {"ticket_id": 2, "note": "done"}, tool="tickets")
    skill = art(
        "chain-t",
        chain_from_calls([closing], "tickets"),
        kind=Kind.SKILL,
        arch=Arch.CHAIN,
        inputs=["t1"],
    )
    c = ctx(skill, [closing], [skill], event=EventType.MIGRATE, interface=ticket_retype())
    built = op.build(c)
    assert json.loads(built.content)["steps"] == [
        {"function": "close_ticket", "args": {"ticket_id": "2", "note": "done"}}
    ]
    assert op.validate(c, built).ok
    stale = op.validate(c, Successor(skill.content, built.inputs))
    assert not stale.ok and "'ticket_id' should be string, got int" in stale.reason
    again = migrate_call(ticket_retype(), "close_ticket", {"ticket_id": "2", "note": "done"})
    assert again == ("close_ticket", {"ticket_id": "2", "note": "done"})


@pytest.mark.parametrize(
    ("value", "declared", "expected"),
    [
        (2, "string", "2"),
        (True, "string", "true"),
        (1.5, "string", "1.5"),
        ([1, "a"], "string", '[1,"a"]'),
        ("7", "integer", 7),
        ("7.5", "number", 7.5),
        ("false", "boolean", False),
        ("[1]", "array", [1]),
        (3.0, "integer", 3),
        (5, "number", 5),  # already fits
        ("abc", "integer", "abc"),  # no lossless reading: left for the schema check
        ("7.5", "integer", "7.5"),
        (3.5, "integer", 3.5),
        ("$step:0.id", "integer", "$step:0.id"),  # a run-time reference stays
        ("$input:1", "number", "$input:1"),
    ],
)
def test_convert_value_only_when_lossless(value: Any, declared: str, expected: Any) -> None:
    converted = convert_value(value, declared)
    assert converted == expected and type(converted) is type(expected)


def test_retype_converts_only_values_of_the_old_type() -> None:
    # 2.5 was no integer id before the migration either: left for the schema check.
    assert migrate_call(ticket_retype(), "close_ticket", {"ticket_id": 2.5}) == (
        "close_ticket",
        {"ticket_id": 2.5},
    )
    # A migration that did not declare the retype converts nothing.
    plain = TicketBackendV2().schema()
    assert migrate_call(plain, "close_ticket", {"ticket_id": 2}) == (
        "close_ticket",
        {"ticket_id": 2},
    )


def test_interface_retypes_are_checked_and_left_out_when_empty() -> None:
    spec = FunctionSpec(params={"a": "string"})
    with pytest.raises(ValidationError, match="retypes name parameters missing"):
        Interface(tool="t", functions={"f": spec}, retypes={"f": {"b": "integer"}})
    # An interface without retypes dumps as before (event digests do not change).
    assert "retypes" not in currency_migration().model_dump(mode="json")
    assert ticket_retype().model_dump(mode="json")["retypes"] == {
        "close_ticket": {"ticket_id": "integer"}
    }
