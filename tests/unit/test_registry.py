from __future__ import annotations

import importlib.metadata
from importlib.metadata import EntryPoint, EntryPoints
from typing import Any

import pytest
from operator_support import art, registry, sup

from memorepair.errors import ConfigError
from memorepair.model import Arch, Kind, Mode, Recipe
from memorepair.operators.base import Operator
from memorepair.operators.builtin import build_registry
from memorepair.operators.registry import OperatorRegistry
from memorepair.sample.tools import CurrencyBackend, CurrencyBackendV2, currency_migration
from memorepair.settings import LLMConfig, OperatorConfig


def name_of(op: Operator | None) -> str | None:
    return None if op is None else op.name


def test_builtins_by_mode_and_artifact() -> None:
    reg = registry()
    cache = art("c", kind=Kind.CACHE, recipe=Recipe(executor="text.join"))
    assert name_of(reg.operator(Mode.RECOMPUTE, cache)) == "recompute"
    assert name_of(reg.operator(Mode.REGEN, art("s", kind=Kind.SUMMARY))) == "regen"
    prompt = art("p", kind=Kind.SKILL, arch=Arch.PROMPT)
    assert name_of(reg.operator(Mode.REGEN, prompt)) == "regen"
    chain = art("k", kind=Kind.SKILL, arch=Arch.CHAIN)
    assert name_of(reg.operator(Mode.REGEN, chain)) == "chain"
    neural = art("n", kind=Kind.SKILL, arch=Arch.NEURAL)
    assert name_of(reg.operator(Mode.PARAM, neural)) == "param"
    assert reg.operator(Mode.REGEN, neural) is None
    assert reg.operator(Mode.RECOMPUTE, art("r")) is None  # no recipe
    unknown = art("u", kind=Kind.CACHE, recipe=Recipe(executor="no.such"))
    assert reg.operator(Mode.RECOMPUTE, unknown) is None
    for name in ("text.join", "json.pick", "embed.hash", "tool.call"):
        assert reg.executor(name) is not None
    assert reg.executor("nope") is None
    assert "llm" not in [op.name for op in reg.operators]


def test_llm_operator_only_when_configured() -> None:
    llm = LLMConfig(base_url="http://127.0.0.1:9/v1", model="m", api_key=None, timeout_s=5.0)
    reg = build_registry(OperatorConfig(llm=llm), plugins=False)
    summary = art("s", kind=Kind.SUMMARY)
    assert name_of(reg.operator(Mode.REGEN, summary)) == "llm"


def test_backend_selection_by_interface_and_functions() -> None:
    reg = registry()
    assert isinstance(reg.backend("currency"), CurrencyBackend)
    assert isinstance(reg.backend("currency", None, ["convert_amount"]), CurrencyBackendV2)
    assert isinstance(reg.backend("currency", currency_migration()), CurrencyBackendV2)
    assert reg.backend("currency", None, ["teleport"]) is None
    assert reg.backend("nope") is None


def _fake_entry_points(eps: list[EntryPoint]) -> Any:
    def entry_points(*, group: str) -> EntryPoints:
        return EntryPoints(ep for ep in eps if ep.group == group)

    return entry_points


def test_plugin_entry_points_load(monkeypatch: pytest.MonkeyPatch) -> None:
    eps = [
        EntryPoint("upper", "operator_support:SpinBackend", "memorepair.backends"),
        EntryPoint("shout", "operator_support:upper_join", "memorepair.executors"),
    ]
    monkeypatch.setattr(importlib.metadata, "entry_points", _fake_entry_points(eps))
    reg = build_registry(OperatorConfig())
    assert reg.backend("spin") is not None
    shout = reg.executor("shout")
    assert shout is not None and shout([sup("a", "x"), sup("b", "y")], {}, None) == "X Y"


@pytest.mark.parametrize(
    ("group", "value", "fragment"),
    [
        ("memorepair.operators", "no_such_module_xyz:thing", "No module named"),
        ("memorepair.operators", "builtins:dict", "not an operator"),
        ("memorepair.backends", "builtins:object", "not a tool back-end"),
        ("memorepair.executors", "builtins:no_such_attr", "no_such_attr"),
    ],
)
def test_broken_plugin_is_named(
    monkeypatch: pytest.MonkeyPatch, group: str, value: str, fragment: str
) -> None:
    eps = [EntryPoint("broken", value, group)]
    monkeypatch.setattr(importlib.metadata, "entry_points", _fake_entry_points(eps))
    with pytest.raises(ConfigError) as err:
        build_registry(OperatorConfig())
    message = str(err.value)
    assert "'broken'" in message and value in message and group in message
    assert fragment in message


def test_register_rejects_non_operator_and_duplicate_executor() -> None:
    reg = OperatorRegistry()
    with pytest.raises(ConfigError, match="not an operator"):
        reg.register_operator(object())  # type: ignore[arg-type]
    reg.register_executor("x", lambda s, a, i: "")
    with pytest.raises(ConfigError, match="already registered"):
        reg.register_executor("x", lambda s, a, i: "")
