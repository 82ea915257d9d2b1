"""The operator registry: it receives operators, executors and back-ends, never imports them.

The built-ins are assembled by `operators.builtin.build_registry` (which imports them and
this module, never the other way round); third-party plugins come by entry point:

Entry-point groups (each entry point loads an object, a class, or a zero-argument factory):

- ``memorepair.operators``: an ``Operator``; consulted before the built-ins, so a plugin
  can take over the artifacts it accepts;
- ``memorepair.executors``: an ``Executor`` callable (or a class, instantiated), keyed by
  the entry point's name, which is the ``Recipe.executor`` it replays;
- ``memorepair.backends``: a ``ToolBackend`` (or a class/factory returning one).

A plugin that fails to load or is not of the expected shape raises ``ConfigError`` naming
the entry point, at start, before any repair work.
"""

from __future__ import annotations

import importlib.metadata
from collections.abc import Callable, Sequence
from typing import Any

from memorepair.errors import ConfigError
from memorepair.model import Artifact, Interface, Mode

from .base import Executor, Operator, ToolBackend

GROUPS = ("memorepair.operators", "memorepair.executors", "memorepair.backends")


class OperatorRegistry:
    def __init__(self) -> None:
        self._operators: list[Operator] = []
        self._executors: dict[str, Executor] = {}
        self._backends: dict[str, list[ToolBackend]] = {}

    # -- registration --------------------------------------------------------------------

    def register_operator(self, operator: Operator, *, first: bool = False) -> None:
        """Add an operator; ``first=True`` puts it before those already registered."""
        if not isinstance(operator, Operator):
            raise ConfigError(f"{operator!r} is not an operator (needs name, mode, accepts, ...)")
        if self.named(operator.name) is not None:
            raise ConfigError(
                f"an operator named {operator.name!r} is already registered; operator names "
                "are unique (candidates record the name of the operator that will repair them)"
            )
        if first:
            self._operators.insert(0, operator)
        else:
            self._operators.append(operator)

    def register_executor(self, name: str, executor: Executor, *, replace: bool = False) -> None:
        if not callable(executor):
            raise ConfigError(f"executor {name!r} is not callable: {executor!r}")
        if name in self._executors and not replace:
            raise ConfigError(f"executor {name!r} is already registered")
        self._executors[name] = executor

    def register_backend(self, backend: ToolBackend) -> None:
        """Add a tool back-end; several may share a name (one per interface version)."""
        for attr in ("name", "schema", "call"):
            if not hasattr(backend, attr):
                raise ConfigError(f"back-end {backend!r} has no {attr!r}")
        self._backends.setdefault(backend.name, []).append(backend)

    # -- lookup --------------------------------------------------------------------------

    @property
    def operators(self) -> tuple[Operator, ...]:
        return tuple(self._operators)

    def operator(self, mode: Mode, artifact: Artifact) -> Operator | None:
        """The first operator of ``mode`` that accepts the artifact (None: unavailable)."""
        for op in self._operators:
            if op.mode is mode and op.accepts(artifact):
                return op
        return None

    def named(self, name: str) -> Operator | None:
        """The operator registered under ``name`` (what a candidate recorded)."""
        return next((op for op in self._operators if op.name == name), None)

    def executor(self, name: str) -> Executor | None:
        return self._executors.get(name)

    def backends(self, name: str) -> tuple[ToolBackend, ...]:
        return tuple(self._backends.get(name, ()))

    def backend(
        self, name: str, interface: Interface | None = None, functions: Sequence[str] = ()
    ) -> ToolBackend | None:
        """The back-end for tool ``name``.

        With an ``interface`` for this tool (a migrate event's kappa_e): the back-end whose
        schema has exactly those functions, else None. Otherwise the first registered one
        that implements every name in ``functions`` (the first registered if none is asked).
        """
        candidates = self._backends.get(name, [])
        if interface is not None and interface.tool == name:
            return next(
                (b for b in candidates if b.schema().functions == interface.functions), None
            )
        for b in candidates:
            if all(f in b.schema().functions for f in functions):
                return b
        return None


def _instantiate(obj: Any, ready: Callable[[Any], bool]) -> Any:
    """The plugin object itself, or what its class / zero-argument factory returns."""
    return obj if ready(obj) or not callable(obj) else obj()


def _is_operator(obj: Any) -> bool:
    return not isinstance(obj, type) and isinstance(obj, Operator)


def _is_backend(obj: Any) -> bool:
    return not isinstance(obj, type) and all(hasattr(obj, a) for a in ("name", "schema", "call"))


def load_plugins(registry: OperatorRegistry) -> list[Operator]:
    """Register plugin executors and back-ends; return plugin operators (placed by caller)."""
    operators: list[Operator] = []
    for group in GROUPS:
        for ep in sorted(importlib.metadata.entry_points(group=group), key=lambda e: e.name):
            try:
                loaded = ep.load()
                if group == "memorepair.executors":
                    # An executor is itself callable: only a class is instantiated.
                    registry.register_executor(
                        ep.name, loaded() if isinstance(loaded, type) else loaded
                    )
                elif group == "memorepair.operators":
                    obj = _instantiate(loaded, _is_operator)
                    if not _is_operator(obj):
                        raise ConfigError(
                            f"got {obj!r}, not an operator (name, mode, accepts, build, validate)"
                        )
                    operators.append(obj)
                else:
                    obj = _instantiate(loaded, _is_backend)
                    if not _is_backend(obj):
                        raise ConfigError(f"got {obj!r}, not a tool back-end (name, schema, call)")
                    registry.register_backend(obj)
            except Exception as exc:
                raise ConfigError(
                    f"plugin entry point {ep.name!r} = {ep.value!r} in group {group!r} "
                    f"failed to load: {exc}"
                ) from exc
    return operators
