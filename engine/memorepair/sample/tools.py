"""A deterministic demo tool, ``currency``, in two interface versions.

Version 1 has ``convert(amount, from_currency, to_currency)``; version 2 (after the
migration returned by ``currency_migration()``) renames it to
``convert_amount(value, source, target)``. ``format_amount`` is the same in both.

Design choice: the two versions are two back-ends registered under the same tool name.
Each rejects the other's names, as a real upgraded API would. The registry picks the one
whose ``schema()`` equals a migrate event's interface; without an interface, the first
one that implements every function the caller needs. So memory built against v1 keeps
replaying on v1 until a ``migrate`` event moves it to v2, and a stale chain fails under
the new interface. Both classes take no arguments: the chain sandbox rebuilds a back-end
in its subprocess from the class's import path.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:  # imported where used: the sandbox child that runs a call stays light
    from memorepair.model import Interface

#: Units of each currency per 1 EUR (fixed: replay must be reproducible).
RATES: dict[str, float] = {
    "EUR": 1.0,
    "USD": 1.08,
    "GBP": 0.85,
    "CHF": 0.95,
    "JPY": 160.0,
    "SEK": 11.5,
}


def _rate(code: Any) -> float:
    if not isinstance(code, str) or code.upper() not in RATES:
        raise ValueError(f"unknown currency {code!r} (known: {', '.join(sorted(RATES))})")
    return RATES[code.upper()]


def _number(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"{name} must be a number, got {value!r}")
    return float(value)


def convert(amount: float, source: str, target: str) -> float:
    return round(amount / _rate(source) * _rate(target), 2)


def format_amount(amount: float, currency: str) -> str:
    _rate(currency)
    return f"{amount:,.2f} {currency.upper()}"


class _Currency:
    """The shared body of both versions; a version only names `convert` and its params."""

    name = "currency"
    version: int
    #: (function name, amount parameter, source parameter, target parameter)
    convert_names: tuple[str, str, str, str]

    def schema(self) -> Interface:
        from memorepair.model import FunctionSpec, Interface

        function, amount, source, target = self.convert_names
        return Interface(
            tool="currency",
            functions={
                function: FunctionSpec(
                    params={amount: "number", source: "string", target: "string"},
                    required=[amount, source, target],
                ),
                "format_amount": FunctionSpec(
                    params={"amount": "number", "currency": "string"},
                    required=["amount", "currency"],
                ),
            },
        )

    def call(self, function: str, args: Mapping[str, Any], state: dict[str, Any]) -> Any:
        convert_name, amount, source, target = self.convert_names
        if function == convert_name:
            _exact(function, args, {amount, source, target})
            result: Any = convert(_number(amount, args[amount]), args[source], args[target])
        elif function == "format_amount":
            _exact(function, args, {"amount", "currency"})
            result = format_amount(_number("amount", args["amount"]), args["currency"])
        else:
            raise KeyError(f"currency v{self.version} has no function {function!r}")
        state["last"] = result
        return result


class CurrencyBackend(_Currency):
    """Interface version 1: ``convert(amount, from_currency, to_currency)``."""

    version = 1
    convert_names = ("convert", "amount", "from_currency", "to_currency")


class CurrencyBackendV2(_Currency):
    """Interface version 2: ``convert_amount(value, source, target)``; ``convert`` is gone."""

    version = 2
    convert_names = ("convert_amount", "value", "source", "target")


def _exact(function: str, args: Mapping[str, Any], expected: set[str]) -> None:
    if set(args) != expected:
        raise TypeError(f"{function} takes {sorted(expected)}, got {sorted(args)}")


def currency_migration() -> Interface:
    """The ``interface`` of a migrate event from currency v1 to v2 (schema + rename maps)."""
    from memorepair.model import Interface

    return Interface(
        tool="currency",
        functions=CurrencyBackendV2().schema().functions,
        renames={"convert": "convert_amount"},
        param_renames={
            "convert": {"amount": "value", "from_currency": "source", "to_currency": "target"}
        },
    )


class _Registers(Protocol):
    def register_backend(self, backend: Any) -> None: ...


def register_tools(target: _Registers) -> None:
    """Register both versions of the `currency` back-end (on a `MemoryStore` or registry).

    The sample's tool caches replay through `currency` and its migrate event moves them
    to version 2; production registries never carry it.
    """
    target.register_backend(CurrencyBackend())
    target.register_backend(CurrencyBackendV2())
