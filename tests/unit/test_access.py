"""The access rules as plain data: patterns, roles, the operation table and the guard."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from memorepair import access
from memorepair.access import OPERATIONS, ROLES, Caller, Grant, Principal, guarded
from memorepair.errors import AccessDeniedError, InputError


def test_patterns_cover_namespaces_and_narrower_patterns() -> None:
    assert access.covers("team-a", "team-a") and not access.covers("team-a", "team-ab")
    assert access.covers("team-*", "team-ab") and not access.covers("team-*", "tea")
    assert access.covers("*", "anything")
    assert access.covers_pattern("team-*", "team-a*") and access.covers_pattern("*", "x")
    assert not access.covers_pattern("team-a", "team-*")
    for bad in ("", "a*b", "**", "team a", "-x", "a/b"):
        with pytest.raises(InputError, match="pattern"):
            access.check_pattern(bad)


def test_roles_are_independent_but_admin_implies_all() -> None:
    grants = [Grant("p", "team-*", ("reader",)), Grant("p", "team-a", ("writer",))]
    assert access.roles_on(grants, "team-a") == {"reader", "writer"}
    assert access.roles_on(grants, "team-b") == {"reader"}
    assert access.roles_on(grants, "other") == frozenset()
    assert access.roles_on([Grant("p", "*", ("admin",))], "x") == frozenset(ROLES)
    with pytest.raises(InputError, match="roles must be"):
        access.check_roles(["reader", "owner"])


def test_every_operation_needs_a_role_and_each_role_allows_its_own() -> None:
    assert all(OPERATIONS[op] for op in OPERATIONS)
    assert access.operations_needing("reader") == ["export", "lineage", "retrieve", "search"]
    assert access.operations_needing("writer") == ["import", "record", "update"]
    curator = access.operations_needing("curator")
    assert {"forget", "correct", "migrate", "retry", "resume", "plan"} <= set(curator)
    assert "exposure" in access.operations_needing("auditor")
    assert set(access.operations_needing("admin")) == set(OPERATIONS)


def test_names_and_sessions() -> None:
    for good in ("agent-7", "auth0|5f1c", "svc@example.com", "spiffe://x/y"):
        assert access.check_principal(good) == good
    for bad in ("", " x", "a b", "x" * 129, "\nroot"):
        with pytest.raises(InputError, match="principal"):
            Principal(bad)
    assert access.session_id("thread-1") == "thread-1"
    hashed = access.session_id("a thread with spaces")
    assert hashed is not None and hashed.startswith("sha256:") and len(hashed) == 71
    assert access.session_id(None) is None and access.session_id("") is None


@dataclass
class _Gate:
    """An `Access` stand-in that counts checks and allows only `allowed` operations."""

    allowed: set[str]
    checks: list[tuple[str, str, str]] = field(default_factory=list)

    def require(self, caller: Caller, ns: str, operation: str) -> None:
        self.checks.append((caller.principal.name, ns, operation))
        if operation not in self.allowed:
            raise AccessDeniedError(f"may not {operation}")


class _Store:
    def __init__(self, gate: _Gate, name: str = "p", ns: str = "n") -> None:
        self.access = gate
        self.caller = Caller(Principal(name))
        self.ns = ns
        self.wrote: list[str] = []

    @guarded("update")
    def update(self) -> None:
        self.correct()  # an operation's implementation: checked once, outside

    @guarded("correct")
    def correct(self) -> None:
        self.wrote.append("event")

    @guarded("search")
    def search(self, other: _Store) -> None:
        other.correct()  # another caller's store: checked on its own


def test_the_guard_checks_once_at_the_outside_and_before_anything_runs() -> None:
    gate = _Gate({"update", "search"})
    store = _Store(gate)  # type: ignore[arg-type]
    store.update()
    assert gate.checks == [("p", "n", "update")] and store.wrote == ["event"]
    with pytest.raises(AccessDeniedError):
        store.correct()
    assert store.wrote == ["event"]  # refused before the method ran
    gate.checks.clear()
    other = _Store(gate, name="q")  # type: ignore[arg-type]
    with pytest.raises(AccessDeniedError):
        store.search(other)
    assert gate.checks == [("p", "n", "search"), ("q", "n", "correct")]
