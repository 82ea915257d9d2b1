"""Zero-argument back-end classes, importable by name, for the chain sandbox.

The engine validates a chain skill in a child process that rebuilds the tool back-end from
its class's import path and calls it with no arguments (``operators/sandbox.py``). The
BFCL adapters take a tool name and, when migrated, a ``Migration``; so this module makes
one subclass per tool (``Bfcl_<Tool>``) and one per migration (``Migrated_<code>``, the
migration as URL-safe base64 JSON), created on first use and found again by name through
the module's ``__getattr__`` (PEP 562) in any process. Built with no arguments they serve
BFCL's default state (no task scenario); the harness builds them with the tasks'
scenarios in the parent process. Everything they need is pure Python (no database).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping
from dataclasses import asdict
from typing import Any

from bench.bfcl.backends import BfclBackend, MigratedBackend, Migration
from bench.bfcl.data import func_docs, tool_class

TOOL_PREFIX = "Bfcl_"
MIGRATED_PREFIX = "Migrated_"

_classes: dict[str, type] = {}


def _named(cls: type, name: str) -> type:
    cls.__name__ = cls.__qualname__ = name
    cls.__module__ = __name__
    _classes[name] = cls
    return cls


def backend_class(tool: str) -> type[BfclBackend]:
    """The subclass of ``BfclBackend`` for ``tool`` (``cls()`` serves the default state)."""
    name = TOOL_PREFIX + tool
    found = _classes.get(name)
    if found is None:
        # The BFCL class and its docs are loaded with the class, not with each instance:
        # the chain sandbox's worker finds the class once and forks every job from it.
        tool_class(tool)
        func_docs(tool)
        found = _named(type(name, (BfclBackend,), {"tool": tool}), name)
    assert issubclass(found, BfclBackend)
    return found


def make_backend(
    tool: str, scenarios: Mapping[str, Mapping[str, Any]] | None = None
) -> BfclBackend:
    return backend_class(tool)(tool, scenarios)


def encode(migration: Migration) -> str:
    raw = json.dumps(asdict(migration), sort_keys=True, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode(code: str) -> Migration:
    raw = base64.urlsafe_b64decode(code + "=" * (-len(code) % 4))
    return Migration(**json.loads(raw))


def migrated_class(migration: Migration) -> type[MigratedBackend]:
    """A subclass of ``MigratedBackend`` for one migration; ``inner`` defaults to the tool's."""
    name = MIGRATED_PREFIX + encode(migration)
    found = _classes.get(name)
    if found is None:

        def __init__(self: MigratedBackend, inner: BfclBackend | None = None) -> None:
            MigratedBackend.__init__(self, inner or backend_class(migration.tool)(), migration)

        found = _named(type(name, (MigratedBackend,), {"__init__": __init__}), name)
    assert issubclass(found, MigratedBackend)
    return found


def make_migrated(inner: BfclBackend, migration: Migration) -> MigratedBackend:
    return migrated_class(migration)(inner)  # type: ignore[call-arg]


def __getattr__(name: str) -> type:
    if name in _classes:
        return _classes[name]
    if name.startswith(TOOL_PREFIX):
        return backend_class(name[len(TOOL_PREFIX) :])
    if name.startswith(MIGRATED_PREFIX):
        try:
            migration = decode(name[len(MIGRATED_PREFIX) :])
        except (ValueError, TypeError) as exc:
            raise AttributeError(f"{name!r} does not encode a migration: {exc}") from exc
        return migrated_class(migration)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
