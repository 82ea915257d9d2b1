"""Generate the sample memory and events with the same producers the operators repair with.

Records are user turns (labelled with the tool function they ask for) and tool-call
records; caches replay the calls on the `currency` tool; summaries, a prompt skill, a
chain skill, an embedding and a neural router are derived from them, so every event
type reaches every repair mode.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from memorepair.model import ArtifactIn, Recipe
from memorepair.operators.base import Support
from memorepair.operators.chain import chain_from_calls
from memorepair.operators.executors import builtin_executors
from memorepair.operators.neural import train_neural_skill
from memorepair.operators.regen import distill_prompt, summarize
from memorepair.sample.tools import CurrencyBackend, currency_migration

TURNS: list[tuple[str, str, str]] = [
    (
        "turn-01",
        "Ana plans a trip to Zurich in May and budgets 1200 EUR. She travels alone.",
        "convert",
    ),
    ("turn-02", "Ana prefers prices shown in CHF while she is in Switzerland.", "format_amount"),
    ("turn-03", "Ana's hotel in Zurich costs 180 CHF per night. It is near the lake.", "convert"),
    ("turn-04", "Ana asks how much 250 USD is in EUR for the museum pass.", "convert"),
    (
        "turn-05",
        "Ana wants receipts formatted with two decimals and the currency code.",
        "format_amount",
    ),
    ("turn-06", "Ana mentions she is vegetarian and likes quiet restaurants.", "chitchat"),
    ("turn-07", "Ana's flight to Tokyo in July costs 95000 JPY. She flies economy.", "convert"),
    ("turn-08", "Ana says hello and thanks the agent for the help.", "chitchat"),
    ("turn-09", "Convert the 40 GBP train ticket to EUR for Ana.", "convert"),
    ("turn-10", "Show Ana's 75.5 CHF dinner bill as a formatted amount.", "format_amount"),
]

CALLS: list[tuple[str, str, str, dict[str, Any]]] = [
    (
        "call-01",
        "turn-01",
        "convert",
        {"amount": 1200, "from_currency": "EUR", "to_currency": "CHF"},
    ),
    (
        "call-02",
        "turn-03",
        "convert",
        {"amount": 180, "from_currency": "CHF", "to_currency": "EUR"},
    ),
    (
        "call-03",
        "turn-04",
        "convert",
        {"amount": 250, "from_currency": "USD", "to_currency": "EUR"},
    ),
    (
        "call-04",
        "turn-07",
        "convert",
        {"amount": 95000, "from_currency": "JPY", "to_currency": "EUR"},
    ),
    ("call-05", "turn-10", "format_amount", {"amount": 75.5, "currency": "CHF"}),
    ("call-06", "turn-09", "convert", {"amount": 40, "from_currency": "GBP", "to_currency": "EUR"}),
]


def _support(a: ArtifactIn) -> Support:
    return Support(a.uid, 1, a.kind, a.arch, a.content, a.meta, "retained")


def _call_recipe(function: str, params: Sequence[str]) -> Recipe:
    args = {p: f"$input:0.args.{p}" for p in params}
    return Recipe(
        executor="tool.call", args={"backend": "currency", "function": function, "args": args}
    )


class _Memory:
    """The sample memory as it is built, in input-first order (uids are unique)."""

    def __init__(self) -> None:
        self.by: dict[str, ArtifactIn] = {}

    def add(self, **fields: Any) -> ArtifactIn:
        artifact = ArtifactIn.model_validate(fields)
        self.by[artifact.uid] = artifact
        return artifact

    def support(self, uids: Sequence[str]) -> list[Support]:
        return [_support(self.by[u]) for u in uids]

    def derived(self, uid: str, kind: str, inputs: list[str], **extra: Any) -> None:
        """A summary or skill built by the same functions its repairs use."""
        support = self.support(inputs)
        if kind == "summary":
            content = summarize(support)
        elif extra.get("arch") == "prompt":
            content = distill_prompt(support, extra.pop("title"))
        elif extra.get("arch") == "chain":
            content = chain_from_calls(support, "currency")
        else:
            content = train_neural_skill(support)
        self.add(uid=uid, kind=kind, content=content, inputs=inputs, **extra)


def build() -> list[ArtifactIn]:
    memory = _Memory()
    _records(memory)
    _caches(memory)
    _derived(memory)
    embed = builtin_executors(lambda name, iface, fns: None)["embed.hash"]
    memory.add(
        uid="emb-zurich",
        kind="cache",
        recipe=Recipe(executor="embed.hash", args={"dim": 16}),
        content=embed(memory.support(["sum-zurich"]), {"dim": 16}, None),
        inputs=["sum-zurich"],
    )
    return list(memory.by.values())


def _records(memory: _Memory) -> None:
    """The tool's interface, the user's turns and the tool calls they led to."""
    schema = CurrencyBackend().schema().model_dump(mode="json")
    memory.add(
        uid="iface-currency",
        kind="record",
        content=json.dumps(schema, sort_keys=True),
        meta={"tool": "currency", "interface": schema},
    )
    for uid, text, label in TURNS:
        memory.add(uid=uid, kind="record", content=text, meta={"label": label, "speaker": "user"})
    for uid, turn, function, args in CALLS:
        call = {"function": function, "args": args}
        memory.add(
            uid=uid,
            kind="record",
            content=json.dumps(call, sort_keys=True),
            meta={"tool": "currency", "call": call},
            inputs=[turn],
        )


def _caches(memory: _Memory) -> None:
    """One cached result per tool call, replayable through `tool.call`."""
    tool_call = builtin_executors(lambda name, iface, fns: CurrencyBackend())["tool.call"]
    for uid, _, function, args in CALLS:
        recipe = _call_recipe(function, list(args))
        inputs = [uid, "iface-currency"]
        memory.add(
            uid="cache-" + uid.split("-")[1],
            kind="cache",
            content=tool_call(memory.support(inputs), recipe.args, None),
            recipe=recipe,
            inputs=inputs,
            meta={"tool": "currency", "about": f"result of {uid}"},
        )


def _derived(memory: _Memory) -> None:
    """Summaries over turns and caches, and one skill of each architecture."""
    memory.derived(
        "sum-zurich", "summary", ["turn-01", "turn-02", "turn-03", "cache-01", "cache-02"]
    )
    memory.derived("sum-tokyo", "summary", ["turn-07", "cache-04"])
    memory.derived("sum-profile", "summary", ["turn-02", "turn-05", "turn-06"])
    memory.derived("sum-expenses", "summary", ["cache-03", "cache-05", "cache-06"])
    memory.derived("sum-ana", "summary", ["sum-zurich", "sum-tokyo", "sum-profile", "sum-expenses"])
    memory.derived(
        "skill-pricing",
        "skill",
        ["turn-02", "turn-05", "sum-profile"],
        arch="prompt",
        title="Quote prices the way Ana likes",
    )
    memory.derived(
        "skill-convert-format",
        "skill",
        ["call-01", "call-05", "iface-currency"],
        arch="chain",
        meta={"tool": "currency"},
    )
    memory.derived("skill-router", "skill", [t[0] for t in TURNS], arch="neural")


RELATED = [("sum-zurich", "sum-tokyo"), ("turn-06", "sum-profile"), ("sum-ana", "skill-pricing")]


def events() -> dict[str, dict[str, Any]]:
    corrected = {
        "function": "convert",
        "args": {"amount": 1500, "from_currency": "EUR", "to_currency": "CHF"},
    }
    return {
        "event-delete.json": {
            "id": "sample-delete-hotel",
            "type": "delete",
            "roots": ["turn-03"],
            "reason": "Ana asked to forget her hotel booking (erasure request #1042)",
        },
        "event-correct.json": {
            "id": "sample-correct-budget",
            "type": "correct",
            "roots": ["call-01"],
            "reason": "the Zurich budget was 1500 EUR, not 1200",
            "replacements": [
                {
                    "replaces": "call-01",
                    "content": json.dumps(corrected, sort_keys=True),
                    "meta": {"tool": "currency", "call": corrected},
                }
            ],
        },
        "event-migrate.json": {
            "id": "sample-migrate-currency-v2",
            "type": "migrate",
            "roots": ["iface-currency"],
            "reason": "currency API v2 renames convert(amount, from_currency, to_currency)",
            "interface": currency_migration().model_dump(mode="json"),
        },
    }


def write(folder: Path) -> None:
    lines = [
        json.dumps(
            {"type": "artifact", **a.model_dump(mode="json", exclude_defaults=True)}, sort_keys=True
        )
        for a in build()
    ]
    lines += [
        json.dumps({"type": "edge", "src": s, "dst": d, "rel": "RELATED"}, sort_keys=True)
        for s, d in RELATED
    ]
    (folder / "memory.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    for name, event in events().items():
        (folder / name).write_text(
            json.dumps(event, indent=2, sort_keys=True) + "\n", encoding="utf-8"
        )


if __name__ == "__main__":
    write(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).parent)
