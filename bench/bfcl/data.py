"""BFCL multi-turn tasks, function docs and back-end classes, read from the installed package.

Everything is read through ``importlib.resources`` / ``importlib`` from ``bfcl_eval``: nothing
of BFCL lives in this repository. Ground-truth calls are Python call strings
(``grep(file_name='a.txt', pattern='x')``); they are parsed with ``ast`` (literals only,
never evaluated) and positional arguments are bound to names with the real method's
signature, so every call below is ``function(**args)`` with named arguments.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from typing import Any

from memorepair.errors import InputError

#: The eight executable multi-turn back-ends (BFCL class name -> func-doc file). The memory
#: and web-search classes need heavy extras (faiss, sentence-transformers, serpapi) and are
#: not part of the multi-turn categories, so they are left out.
TOOL_DOCS: dict[str, str] = {
    "GorillaFileSystem": "gorilla_file_system.json",
    "MathAPI": "math_api.json",
    "MessageAPI": "message_api.json",
    "TwitterAPI": "posting_api.json",
    "TicketAPI": "ticket_api.json",
    "TradingBot": "trading_bot.json",
    "TravelAPI": "travel_booking.json",
    "VehicleControlAPI": "vehicle_control.json",
}
_MODULE_PREFIX = "bfcl_eval.eval_checker.multi_turn_eval.func_source_code."
_MODULES: dict[str, str] = {
    "GorillaFileSystem": "gorilla_file_system",
    "MathAPI": "math_api",
    "MessageAPI": "message_api",
    "TwitterAPI": "posting_api",
    "TicketAPI": "ticket_api",
    "TradingBot": "trading_bot",
    "TravelAPI": "travel_booking",
    "VehicleControlAPI": "vehicle_control",
}
#: Classes BFCL instantiates without ``_load_scenario`` (they hold no state).
STATELESS_TOOLS = frozenset({"MathAPI"})
DEFAULT_CATEGORY = "multi_turn_base"
#: The categories whose tasks are tool-use sessions on the back-ends above (each task
#: names its ``involved_classes`` and ``initial_config``): the ones a memory is built from.
MULTI_TURN_CATEGORIES = (
    "multi_turn_base",
    "multi_turn_long_context",
    "multi_turn_miss_func",
    "multi_turn_miss_param",
)


@dataclass(frozen=True)
class Call:
    """One ground-truth call with named arguments, attributed to its tool (BFCL class)."""

    tool: str
    function: str
    args: dict[str, Any]

    def as_json(self) -> dict[str, Any]:
        """The call as it appears in chain steps and call records: ``{function, args}``."""
        return {"function": self.function, "args": dict(self.args)}


@dataclass(frozen=True)
class Turn:
    index: int
    text: str  # the user's messages of the turn ("" when it has none)
    calls: tuple[Call, ...]
    #: Functions BFCL adds to the tool set at this turn (``multi_turn_miss_func``): such a
    #: turn has no user message, and its calls answer the request of the turn before.
    added: tuple[str, ...] = ()


@dataclass(frozen=True)
class Task:
    id: str
    turns: tuple[Turn, ...]
    initial_config: dict[str, Any]
    tools: tuple[str, ...]

    def calls(self) -> Iterator[tuple[Turn, int, Call]]:
        """Every ground-truth call in execution order, with its turn and index in the turn."""
        for turn in self.turns:
            for j, call in enumerate(turn.calls):
                yield turn, j, call


def _data_lines(*parts: str) -> list[dict[str, Any]]:
    resource = files("bfcl_eval").joinpath("data", *parts)
    return [json.loads(line) for line in resource.read_text(encoding="utf-8").splitlines() if line]


@cache
def tool_class(tool: str) -> type:
    """The real BFCL back-end class (imported on first use)."""
    if tool not in _MODULES:
        raise InputError(f"unknown BFCL tool {tool!r}; known: {sorted(_MODULES)}")
    module = importlib.import_module(_MODULE_PREFIX + _MODULES[tool])
    cls = getattr(module, tool)
    assert isinstance(cls, type)
    return cls


@cache
def _func_docs(tool: str) -> tuple[dict[str, Any], ...]:
    if tool not in TOOL_DOCS:
        raise InputError(f"unknown BFCL tool {tool!r}; known: {sorted(TOOL_DOCS)}")
    return tuple(_data_lines("multi_turn_func_doc", TOOL_DOCS[tool]))


def func_docs(tool: str) -> list[dict[str, Any]]:
    """The tool's BFCL function docs (JSON-schema-like), one dict per function."""
    return [dict(d) for d in _func_docs(tool)]


@cache
def _method_owner() -> dict[str, str]:
    """Method name -> tool; BFCL method names are unique across the eight classes."""
    owner: dict[str, str] = {}
    for tool in TOOL_DOCS:
        for doc in _func_docs(tool):
            owner[str(doc["name"])] = tool
    return owner


def parse_call(text: str, tools: Sequence[str]) -> Call:
    """Parse one ground-truth call string; the tool is the involved class owning the method."""
    try:
        node = ast.parse(text.strip(), mode="eval").body
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
            raise ValueError("not a plain function call")
        function = node.func.id
        positional = [ast.literal_eval(a) for a in node.args]
        named = {kw.arg: ast.literal_eval(kw.value) for kw in node.keywords if kw.arg}
    except (SyntaxError, ValueError) as e:
        raise InputError(f"ground-truth call {text!r} cannot be parsed: {e}") from e
    tool = _method_owner().get(function)
    if tool is None or tool not in tools:
        raise InputError(f"ground-truth call {text!r}: no involved tool among {list(tools)}")
    if positional:
        params = [p for p in inspect.signature(getattr(tool_class(tool), function)).parameters]
        named = {**dict(zip(params[1:], positional, strict=False)), **named}
    return Call(tool=tool, function=function, args=named)


def load_tasks(category: str = DEFAULT_CATEGORY) -> list[Task]:
    """All tasks of a multi-turn category, joined with their ground-truth call chains.

    Single-turn categories (``simple_python``, ``live_multiple``, ...) are refused: their
    entries are one request and one call against function docs, with no tool back-end
    to run (no ``involved_classes``, no ``initial_config``), so nothing could be replayed
    or repaired.
    """
    if category not in MULTI_TURN_CATEGORIES:
        raise InputError(
            f"BFCL category {category!r} cannot be a memory: only the multi-turn categories "
            f"run tool back-ends that caches and chain skills replay "
            f"(use {', '.join(MULTI_TURN_CATEGORIES)})"
        )
    questions = _data_lines(f"BFCL_v4_{category}.json")
    answers = {
        a["id"]: a["ground_truth"]
        for a in _data_lines("possible_answer", f"BFCL_v4_{category}.json")
    }
    tasks: list[Task] = []
    for q in questions:
        tools = tuple(str(c) for c in q["involved_classes"] if c in TOOL_DOCS)
        truth = answers[q["id"]]
        added = {int(k): tuple(v) for k, v in (q.get("missed_function") or {}).items()}
        turns = []
        for i, (messages, calls) in enumerate(zip(q["question"], truth, strict=True)):
            text = "\n".join(str(m["content"]) for m in messages if m.get("role") == "user")
            parsed = tuple(parse_call(c, tools) for c in calls)
            turns.append(Turn(i, text, parsed, added.get(i, ())))
        tasks.append(Task(str(q["id"]), tuple(turns), dict(q["initial_config"]), tools))
    return tasks


def select_tasks(tasks: Sequence[Task], n: int) -> list[Task]:
    """``n`` tasks spread evenly over the category (deterministic, covers every tool mix)."""
    if n <= 0 or n > len(tasks):
        raise InputError(f"n must be in 1..{len(tasks)}, got {n}")
    return [tasks[(i * len(tasks)) // n] for i in range(n)]
