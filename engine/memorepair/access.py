"""Who may do what: principals, roles granted per namespace pattern, and the one check.

Every operation of `MemoryStore` names the roles that allow it (`OPERATIONS`) and passes
`Access.require` before it reads or writes anything, so the CLI, the MCP tools, the
LangGraph store and the Python API answer a caller the same way: they all call the API.

**Principals.** A call acts as a principal: a name and how it was established
(`Principal.via`). The local surfaces (CLI, stdio MCP, the Python API) act as the
configured principal, MEMOREPAIR_PRINCIPAL, by default the OS account running the
process; `memorepair mcp --http` acts, per request, as the principal its bearer token
proves (an API key's name, or a JWT's subject).

**Roles.** reader (search, get, lineage), writer (record, update), curator (delete,
correct, migrate, retry, resume), auditor (audit, show, plan, status, exposure) and
admin (grants, clear, schema, rebuilding the shared vector index; it implies every other
role on its patterns). A grant gives one principal roles on a namespace pattern: an exact
name, `prefix*`, or `*`.

**The owner (bootstrap).** The owner, MEMOREPAIR_OWNER (by default the OS account that
runs the process), holds admin on every namespace whenever it calls through a local
surface: a laptop user needs no setup, and grants could not bind that account anyway (it
holds the database password). A remote caller is never the owner, whatever its name:
over HTTP a principal holds exactly the roles granted to it (docs/decisions.md).

**What a refusal says.** The check runs before any data is looked at, so a refusal is
the same whether a uid exists or not, and it names the operation, the namespace and the
missing role, never what the namespace holds.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Literal, Protocol, TypeVar, cast

from memorepair import queries
from memorepair.errors import AccessDeniedError, InputError
from memorepair.model import PRINCIPAL_PATTERN
from memorepair.store import Store

GRANTS_OF = queries.named("access/grants_of")
LIST_GRANTS = queries.named("access/list_grants")
SET_GRANT = queries.named("access/set_grant")
REVOKE_GRANT = queries.named("access/revoke_grant")

Role = Literal["reader", "writer", "curator", "auditor", "admin"]
ROLES: tuple[Role, ...] = ("reader", "writer", "curator", "auditor", "admin")

#: How a principal was established: a local surface (also `mcp --http --dev-no-auth`,
#: which serves loopback as the local principal), an API key, or a JWT.
Via = Literal["local", "api-key", "jwt"]

#: A namespace pattern: an exact namespace, a prefix followed by `*`, or `*` alone.
PATTERN = r"^(\*|[A-Za-z0-9][A-Za-z0-9._\-]{0,63}\*?)$"
#: Sessions (an MCP session id, a LangGraph thread id, an API argument) are kept as given
#: when short and printable, else as a hash: use records hold ids, never content.
SESSION_PATTERN = re.compile(r"^[\x21-\x7e]{1,128}$")

#: Each operation of the API and the roles that allow it (any one of them; admin allows
#: every operation on its patterns).
OPERATIONS: Mapping[str, frozenset[Role]] = {
    "search": frozenset({"reader"}),
    "retrieve": frozenset({"reader"}),
    "export": frozenset({"reader"}),
    "lineage": frozenset({"reader", "auditor"}),
    "record": frozenset({"writer"}),
    "import": frozenset({"writer"}),
    "update": frozenset({"writer"}),
    "forget": frozenset({"curator"}),
    "correct": frozenset({"curator"}),
    "migrate": frozenset({"curator"}),
    "repair": frozenset({"curator"}),
    "retry": frozenset({"curator"}),
    "resume": frozenset({"curator"}),
    "reindex": frozenset({"curator"}),
    "plan": frozenset({"auditor", "curator"}),
    "status": frozenset({"auditor"}),
    "audit": frozenset({"auditor"}),
    "show": frozenset({"auditor"}),
    "exposure": frozenset({"auditor"}),
    "clear": frozenset({"admin"}),
    "schema": frozenset({"admin"}),
    "grants": frozenset({"admin"}),
}


@dataclass(frozen=True)
class Principal:
    """Who a call acts as: a name, and how it was established."""

    name: str
    via: Via = "local"

    def __post_init__(self) -> None:
        check_principal(self.name)


@dataclass(frozen=True)
class Caller:
    """A principal and, where the surface has one, its session (an MCP session, a
    LangGraph thread): what use records keep of a read."""

    principal: Principal
    session: str | None = None


@dataclass(frozen=True)
class Grant:
    """Roles one principal holds on a namespace pattern."""

    principal: str
    pattern: str
    roles: tuple[Role, ...]
    granted_by: str | None = None
    granted_at: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "principal": self.principal,
            "pattern": self.pattern,
            "roles": list(self.roles),
            "granted_by": self.granted_by,
            "granted_at": self.granted_at,
        }


def os_user() -> str:
    """The login name of the OS account running this process (its effective uid)."""
    import pwd

    uid = os.geteuid()
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:  # a container user without a passwd entry
        return f"uid-{uid}"


def check_principal(name: str) -> str:
    if not isinstance(name, str) or not re.fullmatch(PRINCIPAL_PATTERN, name):
        raise InputError(
            f"principal {str(name)[:80]!r} is not a valid name: 1-128 characters, letters, "
            "digits and . _ @ : + | = / -, starting with a letter or digit"
        )
    return name


def check_pattern(pattern: str) -> str:
    if not isinstance(pattern, str) or not re.fullmatch(PATTERN, pattern):
        raise InputError(
            f"namespace pattern {str(pattern)[:80]!r} is not valid: a namespace, a namespace "
            "prefix followed by '*' (team-*), or '*' for every namespace"
        )
    return pattern


def check_roles(roles: Iterable[str]) -> tuple[Role, ...]:
    given = list(roles)
    unknown = sorted(set(given) - set(ROLES))
    if unknown or not given:
        raise InputError(
            f"roles must be some of {', '.join(ROLES)}, got {', '.join(given) or 'none'}"
        )
    return tuple(r for r in ROLES if r in given)


def session_id(session: str | None) -> str | None:
    """A session as use records keep it: as given when short and printable, else hashed."""
    if session is None or session == "":
        return None
    if SESSION_PATTERN.fullmatch(session):
        return session
    import hashlib

    return "sha256:" + hashlib.sha256(session.encode("utf-8", "replace")).hexdigest()


def covers(pattern: str, ns: str) -> bool:
    """Whether a grant's pattern applies to namespace `ns`."""
    if pattern.endswith("*"):
        return ns.startswith(pattern[:-1])
    return pattern == ns


def covers_pattern(outer: str, inner: str) -> bool:
    """Whether every namespace `inner` matches is matched by `outer` (an admin on
    `outer` may grant on `inner`)."""
    if outer.endswith("*"):
        return inner.startswith(outer[:-1])
    return outer == inner


def roles_on(grants: Iterable[Grant], ns: str) -> frozenset[Role]:
    """The roles a principal's grants give it on `ns` (admin implies every role)."""
    held: set[Role] = set()
    for grant in grants:
        if covers(grant.pattern, ns):
            held.update(grant.roles)
    return frozenset(ROLES) if "admin" in held else frozenset(held)


def allowed(operation: str, roles: frozenset[Role]) -> bool:
    return bool(OPERATIONS[operation] & roles)


def grant_key(principal: str, pattern: str) -> str:
    return f"{principal}\n{pattern}"


class Access:
    """The access check over the grants stored in the graph (one read per check)."""

    def __init__(self, store: Store, *, owner: str | None) -> None:
        self.store = store
        #: The local principal holding admin everywhere (None: nobody, grants only).
        self.owner = owner or None

    def is_owner(self, principal: Principal) -> bool:
        return principal.via == "local" and self.owner is not None and principal.name == self.owner

    def grants_of(self, principal: Principal) -> list[Grant]:
        rows = self.store.read(GRANTS_OF, principal=principal.name)
        return [Grant(principal.name, r["pattern"], tuple(r["roles"])) for r in rows]

    def roles(self, principal: Principal, ns: str) -> frozenset[Role]:
        """Every role `principal` holds on namespace `ns`."""
        if self.is_owner(principal):
            return frozenset(ROLES)
        return roles_on(self.grants_of(principal), ns)

    def require(self, caller: Caller, ns: str, operation: str) -> None:
        """Refuse `operation` on `ns` unless the caller holds one of its roles there."""
        needed = OPERATIONS[operation]
        if allowed(operation, self.roles(caller.principal, ns)):
            return
        name = caller.principal.name
        role = " or ".join(r for r in ROLES if r in needed)
        raise AccessDeniedError(
            f"principal {name!r} may not {operation} in namespace {ns!r}: that needs the "
            f"{role} role there (an admin grants it: memorepair grants set {name} {ns} "
            f"{sorted(needed)[0]})"
        )

    # ---- grants ------------------------------------------------------------------------
    def grants(self, caller: Caller, principal: str | None = None) -> list[Grant]:
        """The grants the caller may see: its own, and those on patterns it administers."""
        if principal is not None:
            check_principal(principal)
        rows = self.store.read(LIST_GRANTS, principal=principal)
        found = [
            Grant(r["principal"], r["pattern"], tuple(r["roles"]), r["granted_by"], r["granted_at"])
            for r in rows
        ]
        if self.is_owner(caller.principal):
            return found
        mine = self.grants_of(caller.principal)
        admin = [g.pattern for g in mine if "admin" in g.roles]
        return [
            g
            for g in found
            if g.principal == caller.principal.name
            or any(covers_pattern(a, g.pattern) for a in admin)
        ]

    def set_grant(
        self, caller: Caller, principal: str, pattern: str, roles: Iterable[str]
    ) -> Grant:
        """Give `principal` exactly `roles` on `pattern` (an admin of that pattern only)."""
        check_principal(principal)
        check_pattern(pattern)
        chosen = check_roles(roles)
        self._require_admin(caller, pattern)
        row = self.store.write(
            SET_GRANT,
            principal=principal,
            pattern=pattern,
            key=grant_key(principal, pattern),
            roles=list(chosen),
            by=caller.principal.name,
        )[0]
        return Grant(principal, row["pattern"], tuple(row["roles"]), caller.principal.name)

    def revoke_grant(
        self, caller: Caller, principal: str, pattern: str, roles: Iterable[str] | None = None
    ) -> tuple[Role, ...]:
        """Take `roles` (all when None) back from `principal` on `pattern`; the roles it
        keeps there. An unknown grant is an error, so a typo does not look like success."""
        check_principal(principal)
        check_pattern(pattern)
        chosen = None if roles is None else list(check_roles(roles))
        self._require_admin(caller, pattern)
        rows = self.store.write(REVOKE_GRANT, key=grant_key(principal, pattern), roles=chosen)
        if not rows:
            raise InputError(
                f"principal {principal!r} holds no grant on {pattern!r} (see "
                "`memorepair grants show`)"
            )
        return check_roles(rows[0]["roles"]) if rows[0]["roles"] else ()

    def _require_admin(self, caller: Caller, pattern: str) -> None:
        if self.is_owner(caller.principal):
            return
        mine = self.grants_of(caller.principal)
        if any("admin" in g.roles and covers_pattern(g.pattern, pattern) for g in mine):
            return
        name = caller.principal.name
        raise AccessDeniedError(
            f"principal {name!r} may not change grants on {pattern!r}: that needs the admin "
            f"role on a pattern covering {pattern!r}"
        )


# ---- the guard on MemoryStore's methods -----------------------------------------------------
class Guarded(Protocol):
    """What `guarded` needs of the object whose methods it checks (MemoryStore)."""

    ns: str
    access: Access
    caller: Caller


F = TypeVar("F", bound=Callable[..., Any])

#: The (caller, namespace) whose operation is running: an operation that calls another
#: (update runs a correct event) was checked once, at the outside.
_INSIDE: ContextVar[tuple[Caller, str] | None] = ContextVar("memorepair_access", default=None)


def guarded(operation: str) -> Callable[[F], F]:
    """Check `operation` against the store's caller before the method runs.

    A method called from inside another operation of the same caller and namespace (its
    implementation) is not checked again; a call on any other store or caller is.
    """
    if operation not in OPERATIONS:
        raise ValueError(f"unknown operation {operation!r}")

    def wrap(method: F) -> F:
        @functools.wraps(method)
        def checked(self: Guarded, *args: Any, **kwargs: Any) -> Any:
            here = (self.caller, self.ns)
            if _INSIDE.get() == here:
                return method(self, *args, **kwargs)
            self.access.require(self.caller, self.ns, operation)
            token = _INSIDE.set(here)
            try:
                return method(self, *args, **kwargs)
            finally:
                _INSIDE.reset(token)

        return cast(F, checked)

    return wrap


def operations_needing(role: Role) -> Sequence[str]:
    """The operations `role` (alone) allows: for docs and tests."""
    return sorted(op for op in OPERATIONS if allowed(op, roles_on([Grant("x", "*", (role,))], "n")))
