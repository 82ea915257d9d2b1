"""MemoRepair as an MCP server: the memory an agent reads and writes through tools.

`memorepair mcp` serves these tools over stdio (or streamable HTTP with `--http`), built
with the official SDK's `FastMCP` (the `mcp` extra, pinned below 2). Each tool is a thin
call of `memorepair.api.MemoryStore`, so it behaves exactly as the CLI command of the
same job, access check included; its docstring is what the calling model reads. Results
are JSON objects; a MemoRepair error (a refused role too) comes back as a tool error
carrying the CLI's one-line message. Every tool takes an optional `namespace` (default:
the server's, from `--ns` or MEMOREPAIR_NAMESPACE); one connection serves them all.

**Who calls.** Over stdio every call acts as the local principal. Over HTTP the server is
an OAuth 2.1 resource server through the SDK's own auth: `AuthSettings` (protected
resource metadata at `/.well-known/oauth-protected-resource/mcp`), the bearer middleware
(401 with `WWW-Authenticate` for a missing, bad, expired or revoked token) and a
`TokenVerifier` that asks `api.authenticator` (API keys, JWTs). Each tool call then acts
as the request's principal in its MCP session (`mcp-session-id`), which use records keep
for `audit exposure`; the SDK binds a session to the principal that opened it.

**Limits (HTTP).** Per principal, requests per minute and requests in flight
(`RateLimits`, an ASGI middleware after authentication: HTTP 429 with a JSON-RPC error
and `Retry-After`); `k` and content size per tool call (tool errors); request body size
(413) and open sessions (503) through the SDK's own settings; idle sessions expire.

What no other memory server offers, and the reason to use this one: `memory_forget`
withdraws everything derived from what is forgotten before it returns, `repair_plan`
shows that set without touching it, and `memory_lineage` / `audit_check` show what was
served and on what support.
"""

from __future__ import annotations

import json
import math
import threading
import time
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import anyio
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.fastmcp import FastMCP
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from starlette.types import ASGIApp, Receive, Scope, Send

from memorepair.api import MemoryStore, Principal, authenticator, loopback, open_store
from memorepair.errors import AccessDeniedError, ConfigError, MemoRepairError
from memorepair.events import RepairReport
from memorepair.model import Artifact
from memorepair.settings import Settings

SERVER_NAME = "memorepair"
DEFAULT_PORT = 8765

INSTRUCTIONS = """\
Long-term memory with provenance and guaranteed repair. Record what you learn with
memory_record, naming in `inputs` the memories it was derived from (pin `uid@version` to
the version you read: memory_search and memory_get return it). When a source must go
(a user's erasure request) call memory_forget: everything derived from it stops being
served at once and is rebuilt from what remains, or removed. When a source was wrong, call
memory_correct; when a tool's API changed, tool_migrated. repair_plan shows what such a
change would withdraw without doing it. Never re-record text you read from a memory that
memory_get no longer returns."""

Kind = Literal["record", "cache", "summary", "skill"]
Arch = Literal["neural", "prompt", "chain"]
SearchMode = Literal["hybrid", "vector", "text"]
MetaValue = str | int | float | bool

READ_ONLY = ToolAnnotations(readOnlyHint=True, idempotentHint=True, openWorldHint=False)
ADDITIVE = ToolAnnotations(
    readOnlyHint=False, destructiveHint=False, idempotentHint=False, openWorldHint=False
)
DESTRUCTIVE = ToolAnnotations(
    readOnlyHint=False, destructiveHint=True, idempotentHint=False, openWorldHint=False
)


#: Who a tool call acts as: a principal (None: the store's own, the local one) and the
#: MCP session it came in (None over stdio).
Who = tuple[Principal | None, str | None]


@dataclass(frozen=True)
class ToolLimits:
    """Per-call limits on the shared surface (HTTP): answered as tool errors."""

    max_k: int
    max_content_bytes: int

    def check_k(self, k: int) -> None:
        if k > self.max_k:
            raise _LimitError(f"k={k} is over this server's limit of {self.max_k} results")

    def check_content(self, *texts: str | None) -> None:
        size = sum(len(t.encode("utf-8")) for t in texts if t)
        if size > self.max_content_bytes:
            raise _LimitError(
                f"content of {size} bytes is over this server's limit of "
                f"{self.max_content_bytes} bytes per call (MEMOREPAIR_HTTP_MAX_CONTENT_BYTES)"
            )


class _LimitError(MemoRepairError):
    """A tool call over one of the HTTP limits."""


class Memories:
    """One MemoryStore per namespace the clients use, over one connection opened on first
    use (so a client can list the tools before Neo4j is up); each call gets a view of it
    acting as the caller (`who`)."""

    def __init__(
        self,
        opener: Callable[[], MemoryStore],
        *,
        who: Callable[[], Who] = lambda: (None, None),
        limits: ToolLimits | None = None,
    ) -> None:
        self._opener = opener
        self._base: MemoryStore | None = None
        self._by_ns: dict[str, MemoryStore] = {}
        self._lock = threading.Lock()
        #: Who the current tool call acts as (read in the call's own async context).
        self.who = who
        self.limits = limits

    def over_limit(self, *, k: int = 0, texts: tuple[Any, ...] = ()) -> CallToolResult | None:
        """A tool error when a call is over the HTTP limits (`k`, content size), else None."""
        if self.limits is None:
            return None
        try:
            self.limits.check_k(k)
            self.limits.check_content(*(t if isinstance(t, str) else json.dumps(t) for t in texts))
        except _LimitError as exc:
            return _error(str(exc))
        return None

    def get(self, namespace: str | None, who: Who = (None, None)) -> MemoryStore:
        with self._lock:
            if self._base is None:
                self._base = self._opener()
            ns = namespace or self._base.ns
            if ns not in self._by_ns:
                self._by_ns[ns] = self._base.namespace(ns)
            memory = self._by_ns[ns]
        principal, session = who
        if principal is None and session is None:
            return memory
        return memory.acting_as(principal, session=session)

    def close(self) -> None:
        with self._lock:
            for memory in self._by_ns.values():
                if memory is not self._base:
                    memory.close()
            if self._base is not None:
                self._base.close()
            self._base, self._by_ns = None, {}


def _result(data: Mapping[str, Any]) -> CallToolResult:
    text = json.dumps(data, indent=2, sort_keys=True, default=str)
    structured = json.loads(text)  # plain JSON types only (datetimes as text)
    return CallToolResult(
        content=[TextContent(type="text", text=text)], structuredContent=structured
    )


def _error(message: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=message)], isError=True)


async def _run(
    memories: Memories, namespace: str | None, work: Callable[[MemoryStore], Mapping[str, Any]]
) -> CallToolResult:
    """Run blocking API work on a worker thread; MemoRepair errors become tool errors
    with the message the CLI prints (the model can act on it: which uid, what to do)."""

    try:
        who = memories.who()
    except MemoRepairError as exc:
        return _error(str(exc))

    def call() -> Mapping[str, Any]:
        memory = memories.get(namespace, who)
        return {"namespace": memory.ns, **work(memory)}

    try:
        return _result(await anyio.to_thread.run_sync(call))
    except MemoRepairError as exc:
        return _error(str(exc))


def artifact_json(artifact: Artifact) -> dict[str, Any]:
    """A served version as a tool returns it: `pin` is what to cite as an input."""
    return {
        "uid": artifact.uid,
        "version": artifact.version,
        "pin": f"{artifact.uid}@{artifact.version}",
        "kind": artifact.kind.value,
        "arch": artifact.arch.value if artifact.arch else None,
        "content": artifact.content,
        "meta": artifact.meta,
        "inputs": artifact.inputs,
    }


def report_json(report: RepairReport) -> dict[str, Any]:
    """A repair's report, saying plainly whether everything it withdrew is settled."""
    left = report.stranded
    data = report.as_dict()
    data["stranded"] = left
    data["complete"] = not left
    if left:
        data["warning"] = (
            f"{len(left)} artifact(s) stay withdrawn, not repaired (e.g. "
            + ", ".join(
                f"{s['uid']} ({s['outcome']}: {s['detail'] or 'see repair_status'})"
                for s in left[:3]
            )
            + f"); they are not served until the cause is fixed and `memorepair retry "
            f"{report.event}` runs"
        )
    return data


def plan_json(plan_data: Mapping[str, Any]) -> dict[str, Any]:
    """A dry run with its answer up front: withdrawn, repaired, removed, relative cost."""
    candidates = plan_data["candidates"]
    roots = set(plan_data["roots"])
    repaired = [c["uid"] for c in candidates if c["selected"]]
    dropped = [c["uid"] for c in candidates if not c["selected"]]
    all_cost = plan_data["repair_all_cost"]
    return {
        "would_withdraw": plan_data["cascade"],
        "would_repair": repaired,
        "would_remove": sorted(roots) + dropped if plan_data["type"] == "delete" else dropped,
        "cost_vs_repair_all": plan_data["cost"] / all_cost if all_cost else 0.0,
        "plan": dict(plan_data),
    }


@dataclass(frozen=True)
class HttpOptions:
    """How `memorepair mcp --http` listens."""

    host: str = "127.0.0.1"
    port: int = DEFAULT_PORT
    #: Serve without authentication, as the local principal: loopback only.
    dev_no_auth: bool = False
    tls_cert: Path | None = None
    tls_key: Path | None = None

    @property
    def scheme(self) -> str:
        return "https" if self.tls_cert else "http"

    def check(self) -> None:
        """Refuse what would hand the memory or the tokens to the network."""
        if bool(self.tls_cert) != bool(self.tls_key):
            raise ConfigError("--tls-cert and --tls-key go together")
        if self.dev_no_auth and not loopback(self.host):
            raise ConfigError(
                f"--dev-no-auth serves without authentication: only on loopback "
                f"(127.0.0.1, ::1, localhost), not {self.host!r}"
            )
        if not loopback(self.host) and self.tls_cert is None:
            raise ConfigError(
                f"serving on {self.host!r} sends bearer tokens over the network: give "
                "--tls-cert and --tls-key, or listen on 127.0.0.1 behind a TLS proxy"
            )


class PrincipalToken(AccessToken):
    """The SDK's access token, with how its principal was established (API key, JWT)."""

    via: Literal["api-key", "jwt"]


class Verifier:
    """The SDK's `TokenVerifier`: a bearer token to its principal (`api.authenticator`),
    off the event loop (a JWT may need the issuer's key set; an API key a hash)."""

    def __init__(self, check: Any, resource_url: str) -> None:
        self._check = check
        self._resource = resource_url

    async def verify_token(self, token: str) -> AccessToken | None:
        found = await anyio.to_thread.run_sync(self._check.authenticate, token)
        if found is None:
            return None
        name = found.principal.name
        return PrincipalToken(
            token=token,
            client_id=name,
            subject=name,
            scopes=list(found.scopes),
            expires_at=found.expires_at,
            resource=self._resource,
            claims=found.claims or None,
            via=found.principal.via,
        )


def _who_of(server: FastMCP, *, authenticated: bool) -> Callable[[], Who]:
    """Who the current tool call acts as: the request's authenticated principal (HTTP),
    or the local one (stdio, and `--dev-no-auth`); never the local one when the server
    requires authentication."""

    def who() -> Who:
        try:
            request = server.get_context().request_context.request
        except (LookupError, ValueError):
            request = None
        if request is None:
            if authenticated:
                raise AccessDeniedError("this server needs an authenticated principal")
            return None, None
        session = request.headers.get("mcp-session-id")
        user = request.scope.get("user")
        if isinstance(user, AuthenticatedUser) and isinstance(user.access_token, PrincipalToken):
            token = user.access_token
            return Principal(token.client_id, token.via), session
        if authenticated:
            raise AccessDeniedError("this server needs an authenticated principal")
        return None, session

    return who


def build_server(
    opener: Callable[[], MemoryStore],
    *,
    port: int = DEFAULT_PORT,
    host: str = "127.0.0.1",
    auth: tuple[AuthSettings, Verifier] | None = None,
    limits: ToolLimits | None = None,
    sessions: tuple[int, float] | None = None,
    max_body_bytes: int | None = None,
) -> FastMCP:
    """The MCP server over a store opened by `opener` on first use; closed at shutdown.
    With `auth` every HTTP request needs a bearer token (see the module doc)."""
    memories = Memories(opener, limits=limits)

    @asynccontextmanager
    async def lifespan(_: FastMCP) -> AsyncIterator[None]:
        try:
            yield
        finally:
            memories.close()

    extra: dict[str, Any] = {}
    if auth is not None:
        extra.update(auth=auth[0], token_verifier=auth[1])
    if sessions is not None:
        extra.update(max_sessions=sessions[0], session_idle_timeout=sessions[1])
    if max_body_bytes is not None:
        extra.update(max_request_body_size=max_body_bytes)
    server = FastMCP(
        SERVER_NAME,
        instructions=INSTRUCTIONS,
        host=host,
        port=port,
        lifespan=lifespan,
        log_level="WARNING",  # stderr stays quiet: hosts show it to users
        **extra,
    )
    memories.who = _who_of(server, authenticated=auth is not None)
    for tool, hints in _tools(memories):
        server.add_tool(tool, name=tool.__name__, annotations=hints)
    return server


def serve(
    settings: Settings,
    *,
    ns: str | None = None,
    http: bool = False,
    options: HttpOptions | None = None,
) -> None:
    """Run the server until the client closes stdio (or until interrupted, for HTTP)."""
    opener = lambda: open_store(ns=ns, settings=settings)  # noqa: E731
    if not http:
        build_server(opener).run("stdio")
        return
    app = http_app(settings, opener, options or HttpOptions())
    _run_http(app, options or HttpOptions())


def http_app(
    settings: Settings, opener: Callable[[], MemoryStore], options: HttpOptions
) -> ASGIApp:
    """The HTTP server's ASGI app: auth (unless --dev-no-auth), limits, the MCP endpoint."""
    from starlette.middleware import Middleware

    options.check()
    resource = settings.http_resource_url or f"{options.scheme}://{options.host}:{options.port}/mcp"
    auth = None
    if not options.dev_no_auth:
        check = authenticator(settings, resource_url=resource)
        if check.jwt is None and not any(
            p.keys and not p.revoked_at for p in check.keys.principals()
        ):
            raise ConfigError(
                "`mcp --http` needs a way to authenticate its callers: add an API key "
                "(memorepair principals add NAME) or set MEMOREPAIR_AUTH_ISSUER and "
                "MEMOREPAIR_AUTH_JWKS_URL (README: Sharing memory); --dev-no-auth serves "
                "loopback without authentication, for development only"
            )
        verifier = Verifier(check, resource)
        auth_settings = AuthSettings(
            issuer_url=settings.auth_issuer or resource,  # type: ignore[arg-type]
            resource_server_url=resource,  # type: ignore[arg-type]
            required_scopes=settings.auth_required_scopes or None,
            validate_token_resource=False,  # the verifier checks `aud` itself
        )
        auth = (auth_settings, verifier)
    server = build_server(
        opener,
        port=options.port,
        host=options.host,
        auth=auth,
        limits=ToolLimits(settings.http_max_k, settings.http_max_content_bytes),
        sessions=(settings.http_max_sessions, settings.http_session_idle_s),
        max_body_bytes=settings.http_max_body_bytes,
    )
    app = server.streamable_http_app()
    app.user_middleware.append(
        Middleware(
            RateLimits,
            per_minute=settings.http_rate_per_minute,
            in_flight=settings.http_max_in_flight,
        )
    )
    return app


def _run_http(app: ASGIApp, options: HttpOptions) -> None:
    import uvicorn

    config = uvicorn.Config(
        app,
        host=options.host,
        port=options.port,
        log_level="warning",
        ssl_certfile=str(options.tls_cert) if options.tls_cert else None,
        ssl_keyfile=str(options.tls_key) if options.tls_key else None,
    )
    uvicorn.Server(config).run()


class RateLimits:
    """Per-principal request rate (a token bucket: `per_minute`, bursts of a tenth of it,
    at least 10) and requests in flight, after authentication. Beyond either, HTTP 429
    with a JSON-RPC error and `Retry-After`: one principal cannot starve the others.
    Requests without a principal pass through (the SDK answers them 401)."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        per_minute: int,
        in_flight: int,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.app = app
        self._clock = clock
        self.rate = per_minute / 60.0
        self.burst = float(max(10, per_minute // 10))
        self.in_flight = in_flight
        self._buckets: dict[str, tuple[float, float]] = {}
        self._busy: dict[str, int] = {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        user = scope.get("user") if scope["type"] == "http" else None
        if not isinstance(user, AuthenticatedUser):
            await self.app(scope, receive, send)
            return
        name = user.access_token.client_id
        wait = self._take(name)
        if wait > 0:
            await _too_many(send, f"over {self.rate * 60:.0f} requests per minute", wait)
            return
        counted = scope.get("method") == "POST"  # GET is the long-lived event stream
        if counted and self._busy.get(name, 0) >= self.in_flight:
            await _too_many(send, f"over {self.in_flight} requests in flight", 1.0)
            return
        if counted:
            self._busy[name] = self._busy.get(name, 0) + 1
        try:
            await self.app(scope, receive, send)
        finally:
            if counted:
                self._busy[name] -= 1

    def _take(self, name: str) -> float:
        """Take one request from `name`'s bucket: 0, or the seconds until one is back."""
        now = self._clock()
        tokens, at = self._buckets.get(name, (self.burst, now))
        tokens = min(self.burst, tokens + (now - at) * self.rate)
        if tokens < 1.0:
            self._buckets[name] = (tokens, now)
            return (1.0 - tokens) / self.rate
        self._buckets[name] = (tokens - 1.0, now)
        return 0.0


async def _too_many(send: Send, why: str, retry_after_s: float) -> None:
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": None,
            "error": {"code": -32000, "message": f"rate limit: {why} for this principal"},
        }
    ).encode()
    await send(
        {
            "type": "http.response.start",
            "status": 429,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (b"retry-after", str(max(1, math.ceil(retry_after_s))).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


def _tools(memories: Memories) -> list[tuple[Callable[..., Any], ToolAnnotations]]:
    return [
        *_read_tools(memories),
        *_write_tools(memories),
        *_repair_tools(memories),
    ]


def _read_tools(memories: Memories) -> list[tuple[Callable[..., Any], ToolAnnotations]]:
    async def memory_search(
        query: str,
        k: int = 10,
        kinds: list[Kind] | None = None,
        meta: dict[str, MetaValue] | None = None,
        since: str | None = None,
        until: str | None = None,
        mode: SearchMode = "hybrid",
        related: bool = False,
        namespace: str | None = None,
    ) -> CallToolResult:
        """Find memories relevant to a question, by meaning and by words (best first).

        Only memories that are currently valid are returned: nothing withdrawn,
        superseded or forgotten, also while a repair is running. Each hit has `pin`
        (`uid@version`): cite it in `inputs` when you record something you derived from
        it. `kinds` narrows to record/cache/summary/skill; `meta` to exact values of the
        fields the server makes searchable; `since`/`until` are ISO 8601 times;
        `related` adds the hits' related memories.
        """

        if over := memories.over_limit(k=k):
            return over

        def work(memory: MemoryStore) -> dict[str, Any]:
            hits = memory.search(
                query,
                k,
                kinds=kinds,
                meta=meta,
                since=since,
                until=until,
                mode=mode,
                related=related,
            )
            return {"hits": [{**h.as_dict(), "pin": f"{h.uid}@{h.version}"} for h in hits]}

        return await _run(memories, namespace, work)

    async def memory_get(uid: str, namespace: str | None = None) -> CallToolResult:
        """Read one memory by uid: its currently served version, or `found: false`.

        `found: false` means it is not valid now (forgotten, withdrawn by a repair, or
        never recorded): do not use what you remember of it; memory_lineage says why.
        """

        def work(memory: MemoryStore) -> dict[str, Any]:
            found = memory.retrieve(uid=uid)
            if not found:
                return {"found": False, "uid": uid}
            return {"found": True, "artifact": artifact_json(found[0])}

        return await _run(memories, namespace, work)

    return [(memory_search, READ_ONLY), (memory_get, READ_ONLY), *_lineage_tools(memories)]


def _lineage_tools(memories: Memories) -> list[tuple[Callable[..., Any], ToolAnnotations]]:
    async def memory_lineage(uid: str, namespace: str | None = None) -> CallToolResult:
        """Every version of one memory: its inputs, visibility (Live = served), and the
        repair events that withdrew, replaced or republished it. Use it to explain why a
        memory is gone or what an answer was based on."""
        return await _run(memories, namespace, lambda m: {"uid": uid, "versions": m.lineage(uid)})

    return [(memory_lineage, READ_ONLY)]


def _write_tools(memories: Memories) -> list[tuple[Callable[..., Any], ToolAnnotations]]:
    async def memory_record(
        uid: str,
        content: str,
        kind: Kind = "record",
        arch: Arch | None = None,
        inputs: list[str] | None = None,
        meta: dict[str, Any] | None = None,
        on_stale: Literal["withdraw", "refuse"] = "withdraw",
        namespace: str | None = None,
    ) -> CallToolResult:
        """Record a new memory with its provenance.

        `kind`: `record` for what you observed (a user turn, a tool's output), `summary`
        for what you derived, `skill` (with `arch`: `prompt`, `chain` or `neural`) for a
        reusable procedure, `cache` for a replayable result. `inputs`: the uids it was
        derived from, best pinned as `uid@version` (the `pin` memory_search/memory_get
        gave you): if a pinned input changed since you read it, the new memory is not
        served (`served: false`) or, with on_stale="refuse", refused. A uid is recorded
        once; change it with memory_update.
        """
        item: dict[str, Any] = {"uid": uid, "kind": kind, "content": content}
        for key, value in (("arch", arch), ("inputs", inputs), ("meta", meta)):
            if value is not None:
                item[key] = value

        if over := memories.over_limit(texts=(content, meta)):
            return over

        def work(memory: MemoryStore) -> dict[str, Any]:
            row = memory.record(item, on_stale=on_stale)
            version = row["vid"].rsplit("@", 1)[1]  # a new uid's first version
            return {**row, "served": bool(row["live"]), "pin": f"{uid}@{version}"}

        return await _run(memories, namespace, work)

    async def tool_register(
        tool: str, schema: Any, uid: str | None = None, namespace: str | None = None
    ) -> CallToolResult:
        """Record a tool's interface (its schema: MCP `tools/list` entries, OpenAI function
        definitions, or {function: JSON Schema}) as memory `tool:<name>`. List that uid in
        the `inputs` of what you derive from the tool's calls: when the tool's API
        changes, tool_migrated repairs exactly those memories."""

        def work(memory: MemoryStore) -> dict[str, Any]:
            row = memory.record_interface(tool, schema, uid=uid)
            return {**row, "served": bool(row["live"])}

        return await _run(memories, namespace, work)

    return [(memory_record, ADDITIVE), (tool_register, ADDITIVE)]


def _repair_tools(memories: Memories) -> list[tuple[Callable[..., Any], ToolAnnotations]]:
    return [*_change_tools(memories), *_migration_tools(memories), *_inspect_tools(memories)]


def _change_tools(memories: Memories) -> list[tuple[Callable[..., Any], ToolAnnotations]]:
    async def memory_update(
        uid: str,
        content: str | None = None,
        meta: dict[str, Any] | None = None,
        inputs: list[str] | None = None,
        reason: str = "",
        namespace: str | None = None,
    ) -> CallToolResult:
        """Change a memory you recorded: it gets a new version, and every memory derived
        from the old one is withdrawn at once and rebuilt from the new one (or removed).
        What you leave out (content, meta, inputs) is kept. The result lists what was
        republished, removed and, under `stranded`, what could not be repaired."""

        if over := memories.over_limit(texts=(content, meta)):
            return over
        return await _run(
            memories,
            namespace,
            lambda m: report_json(
                m.update(uid, content=content, meta=meta, inputs=inputs, reason=reason)
            ),
        )

    async def memory_correct(
        corrections: list[dict[str, Any]],
        reason: str = "",
        erase: bool = False,
        namespace: str | None = None,
    ) -> CallToolResult:
        """A source was wrong: replace one or more memories in one repair event. Each
        correction is {"uid", "content", "meta"?, "inputs"?}. Everything derived from the
        wrong versions is withdrawn and rebuilt from the corrected ones. `erase=true`
        also erases the wrong text everywhere (as memory_forget does)."""

        if over := memories.over_limit(texts=(corrections,)):
            return over
        return await _run(
            memories,
            namespace,
            lambda m: report_json(m.correct(corrections, reason=reason, erase=erase)),
        )

    return [(memory_update, DESTRUCTIVE), (memory_correct, DESTRUCTIVE), *_forget_tools(memories)]


def _forget_tools(memories: Memories) -> list[tuple[Callable[..., Any], ToolAnnotations]]:
    async def memory_forget(
        uids: list[str],
        reason: str = "",
        event_id: str | None = None,
        namespace: str | None = None,
    ) -> CallToolResult:
        """Forget memories for good (e.g. a user's erasure request). Before this returns,
        they and everything derived from them stop being served; derived memories that
        what remains can rebuild are republished, the rest removed, and the forgotten
        text is erased everywhere. Look first with repair_plan if unsure. `event_id`
        makes a retry of the same request safe (same id = same event)."""
        return await _run(
            memories,
            namespace,
            lambda m: report_json(m.forget(uids, reason=reason, event_id=event_id)),
        )

    return [(memory_forget, DESTRUCTIVE)]


def _migration_tools(memories: Memories) -> list[tuple[Callable[..., Any], ToolAnnotations]]:
    async def tool_migrated(
        tool: str,
        new_schema: Any,
        old_schema: Any = None,
        renames: dict[str, str] | None = None,
        param_renames: dict[str, dict[str, str]] | None = None,
        interface_uids: list[str] | None = None,
        dry_run: bool = False,
        reason: str = "",
        namespace: str | None = None,
    ) -> CallToolResult:
        """A tool's API changed: repair the memories derived from its old interface.

        Give the new schema (same forms as tool_register); the old one defaults to the
        recorded interface. Renamed functions (`renames`: old -> new) and parameters
        (`param_renames`: old function -> {old param -> new}) are inferred when the two
        schemas leave no doubt; the result shows what was inferred and what stayed
        unmapped: give the maps yourself if that is wrong. `dry_run=true` returns the
        plan without changing anything.
        """

        def work(memory: MemoryStore) -> dict[str, Any]:
            spec, migration = memory.tool_migration(
                tool,
                new_schema,
                old_schema=old_schema,
                roots=interface_uids,
                renames=renames,
                param_renames=param_renames,
                reason=reason,
            )
            data: dict[str, Any] = {"event": spec.id, **migration.as_dict()}
            if dry_run:
                return {**data, **plan_json(memory.plan(spec).as_dict())}
            return {**data, "report": report_json(memory.repair(spec))}

        return await _run(memories, namespace, work)

    return [(tool_migrated, DESTRUCTIVE)]


def _inspect_tools(memories: Memories) -> list[tuple[Callable[..., Any], ToolAnnotations]]:
    async def repair_plan(
        forget: list[str] | None = None,
        event: dict[str, Any] | None = None,
        namespace: str | None = None,
    ) -> CallToolResult:
        """Dry run, changes nothing: what forgetting `forget` (or running `event`, a
        MemoRepair event: {"type": "delete"|"correct"|"migrate", "roots", ...}) would
        withdraw, which derived memories would be rebuilt and which removed, and its cost
        against rebuilding everything."""
        if (forget is None) == (event is None):
            return _error("repair_plan: give either `forget` (uids) or `event`, not both")

        def work(memory: MemoryStore) -> dict[str, Any]:
            spec = dict(event) if event is not None else {"type": "delete", "roots": forget}
            spec.setdefault("id", "plan")
            return plan_json(memory.plan(spec).as_dict())

        return await _run(memories, namespace, work)

    async def repair_status(
        event_id: str | None = None, namespace: str | None = None
    ) -> CallToolResult:
        """Memories by state (served, withdrawn, superseded, removed), repairs still
        running, and what stays withdrawn and why. With `event_id`: that repair's
        outcome per memory (published, removed, failed, blocked, ...)."""

        def work(memory: MemoryStore) -> dict[str, Any]:
            data = memory.status()
            if event_id is not None:
                data["event"] = {"id": event_id, "sets": memory.audit_event(event_id)}
            return data

        return await _run(memories, namespace, work)

    async def audit_check(
        erasure_event_id: str | None = None, namespace: str | None = None
    ) -> CallToolResult:
        """Check the guarantee: no served memory depends on withdrawn or forgotten
        support (`ok`). With `erasure_event_id` (a memory_forget's `event`): also prove
        that no copy of the forgotten text is left anywhere."""

        def work(memory: MemoryStore) -> dict[str, Any]:
            stale = memory.stale_served()
            data: dict[str, Any] = {"ok": not stale, "stale_served": stale}
            if erasure_event_id is not None:
                erasure = memory.audit_erasure(erasure_event_id)
                data["erasure"] = erasure
                data["ok"] = data["ok"] and bool(erasure["ok"])
            return data

        return await _run(memories, namespace, work)

    return [
        (repair_plan, READ_ONLY),
        (repair_status, READ_ONLY),
        (audit_check, READ_ONLY),
        *_sharing_tools(memories),
    ]


def _sharing_tools(memories: Memories) -> list[tuple[Callable[..., Any], ToolAnnotations]]:
    async def audit_exposure(event_id: str, namespace: str | None = None) -> CallToolResult:
        """Who was served what a repair event withdrew, before it did (auditor role): for
        each withdrawn version that was read, which principal in which session, how many
        reads, first and last time, most read first; and totals per principal. Ids and
        times only. Use it after memory_forget / memory_correct to find the agents that
        acted on the wrong memory."""
        return await _run(memories, namespace, lambda m: m.exposure(event_id))

    async def whoami(namespace: str | None = None) -> CallToolResult:
        """Which principal this connection acts as, and its roles in the namespace
        (reader: search/get/lineage; writer: record/update; curator: forget/correct/
        migrate; auditor: audit/plan/status/exposure; admin: all)."""
        return await _run(memories, namespace, lambda m: m.whoami())

    return [(audit_exposure, READ_ONLY), (whoami, READ_ONLY)]
