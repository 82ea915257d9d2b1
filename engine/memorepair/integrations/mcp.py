"""MemoRepair as an MCP server: the memory an agent reads and writes through tools.

`memorepair mcp` serves these tools over stdio (or streamable HTTP with `--http`), built
with the official SDK's `FastMCP` (the `mcp` extra, pinned below 2). Each tool is a method
of `MemoryTools` over one `memorepair.api.MemoryStore` method (`TOOLS` names it, with the
tool's annotations), so it behaves exactly as the CLI command of the same job, access
check included; its docstring is what the calling model reads. Results are typed
(pydantic models), so clients get each tool's output schema; a MemoRepair error (a
refused role too) comes back as a tool error carrying the CLI's one-line message
(`_Server.call_tool`, the one place that turns errors into tool errors). Every tool takes
an optional `namespace` (default: the server's, from `--ns` or MEMOREPAIR_NAMESPACE); one
connection serves them all.

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
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

import anyio
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.fastmcp import FastMCP
from mcp.server.fastmcp.exceptions import ToolError
from mcp.types import CallToolResult, ContentBlock, TextContent, ToolAnnotations
from pydantic import BaseModel, ConfigDict, Field
from starlette.types import ASGIApp, Receive, Scope, Send

from memorepair.api import (
    Hit,
    MemoryStore,
    Plan,
    Principal,
    RepairReport,
    SearchMode,
    authenticator,
    loopback,
    open_store,
)
from memorepair.errors import AccessDeniedError, ConfigError, InputError, MemoRepairError
from memorepair.model import Arch, Artifact, Kind, pin
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

MetaValue = str | int | float | bool

READ_ONLY = ToolAnnotations(readOnlyHint=True, idempotentHint=True, openWorldHint=False)
ADDITIVE = ToolAnnotations(
    readOnlyHint=False, destructiveHint=False, idempotentHint=False, openWorldHint=False
)
DESTRUCTIVE = ToolAnnotations(
    readOnlyHint=False, destructiveHint=True, idempotentHint=False, openWorldHint=False
)


@dataclass(frozen=True)
class ToolSpec:
    """A tool's hints for clients and the one `MemoryStore` method it is a call of."""

    annotations: ToolAnnotations
    method: str


#: Every tool, in the order clients list them.
TOOLS: dict[str, ToolSpec] = {
    "memory_search": ToolSpec(READ_ONLY, "search"),
    "memory_get": ToolSpec(READ_ONLY, "retrieve"),
    "memory_lineage": ToolSpec(READ_ONLY, "lineage"),
    "memory_record": ToolSpec(ADDITIVE, "record"),
    "tool_register": ToolSpec(ADDITIVE, "record_interface"),
    "memory_update": ToolSpec(DESTRUCTIVE, "update"),
    "memory_correct": ToolSpec(DESTRUCTIVE, "correct"),
    "memory_forget": ToolSpec(DESTRUCTIVE, "forget"),
    "tool_migrated": ToolSpec(DESTRUCTIVE, "migrate_tool"),
    "repair_plan": ToolSpec(READ_ONLY, "plan"),
    "repair_status": ToolSpec(READ_ONLY, "status"),
    "audit_check": ToolSpec(READ_ONLY, "check"),
    "audit_exposure": ToolSpec(READ_ONLY, "exposure"),
    "whoami": ToolSpec(READ_ONLY, "whoami"),
}

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


# ---- results -------------------------------------------------------------------------------
class Result(BaseModel):
    """What every tool answers with: the namespace it ran in, and its own fields."""

    model_config = ConfigDict(populate_by_name=True)

    namespace: str = ""


class SearchHit(BaseModel):
    uid: str
    version: int
    kind: str
    score: float | None
    ranks: dict[str, int | None]
    content: str
    related_to: str | None
    pin: str

    @classmethod
    def of(cls, hit: Hit) -> SearchHit:
        return cls(**hit.as_dict(), pin=hit.pin)


class SearchResult(Result):
    hits: list[SearchHit]


class ArtifactOut(BaseModel):
    """A served version as a tool returns it: `pin` is what to cite as an input."""

    uid: str
    version: int
    pin: str
    kind: str
    arch: str | None
    content: str
    meta: dict[str, Any]
    inputs: list[str]

    @classmethod
    def of(cls, artifact: Artifact) -> ArtifactOut:
        return cls(
            uid=artifact.uid,
            version=artifact.version,
            pin=artifact.pin,
            kind=artifact.kind.value,
            arch=artifact.arch.value if artifact.arch else None,
            content=artifact.content,
            meta=artifact.meta,
            inputs=artifact.inputs,
        )


class GetResult(Result):
    found: bool
    uid: str | None = None
    artifact: ArtifactOut | None = None


class LineageResult(Result):
    uid: str
    versions: list[dict[str, Any]]


class Redaction(BaseModel):
    """Why a recorded memory's text was not stored: an input it derives from is erased."""

    input: str
    event: str
    reason: str


class RecordResult(Result):
    vid: str
    uid: str
    live: bool
    held_by: str | None
    served: bool
    pin: str | None = None
    #: Set when the memory was recorded redacted (withdrawn, its text not stored).
    redacted: Redaction | None = None


def _copies_warning(report: RepairReport) -> str:
    proof = report.erasure or {}
    where = ", ".join(f"{c['where']}.{c['property']}" for c in proof.get("copies", [])[:3])
    return (
        f"the event stays open: its erasure scan found {proof.get('erasure_copies')} copies "
        f"of the erased text (e.g. {where}) that do not derive from it; forget or correct "
        f"those memories, then `memorepair resume {report.event}` finishes the erasure"
    )


class ReportResult(Result):
    """A repair's report, saying plainly whether everything it withdrew is settled."""

    event: str
    type: str
    status: str
    selector: str
    lam: float = Field(alias="lambda")
    withdrawn: int
    candidates: int
    executable: int
    selected: list[str]
    outcomes: dict[str, list[str]]
    objective: float
    repair_value: float
    cost: float
    repair_all_value: float
    repair_all_cost: float
    normalised_cost: float
    backend: str
    seconds: dict[str, float]
    details: dict[str, str]
    resumed_from: str | None
    stranded: list[dict[str, str]]
    complete: bool
    warning: str | None = None
    #: An erasing event's proof: what it redacted, its late writes, the copies it found.
    erasure: dict[str, Any] | None = None

    @classmethod
    def of(cls, report: RepairReport) -> ReportResult:
        left = report.stranded
        copies = report.erasure is not None and not report.erasure["ok"]
        result = cls.model_validate(
            {**report.as_dict(), "stranded": left, "complete": not left and not copies}
        )
        if copies:
            result.warning = _copies_warning(report)
        elif left:
            result.warning = (
                f"{len(left)} artifact(s) stay withdrawn, not repaired (e.g. "
                + ", ".join(
                    f"{s['uid']} ({s['outcome']}: {s['detail'] or 'see repair_status'})"
                    for s in left[:3]
                )
                + f"); they are not served until the cause is fixed and `memorepair retry "
                f"{report.event}` runs"
            )
        return result


class PlanResult(Result):
    """A dry run with its answer up front: withdrawn, repaired, removed, relative cost."""

    would_withdraw: list[str]
    would_repair: list[str]
    would_remove: list[str]
    cost_vs_repair_all: float
    plan: dict[str, Any]
    #: With `frontier`: every selection the repair would make as lambda grows
    #: (`Plan.frontier`: value in reads, cost in seconds, what each step skips).
    frontier: dict[str, Any] | None = None

    @classmethod
    def of(cls, plan: Plan, *, frontier: bool = False) -> PlanResult:
        data = plan.as_dict()
        candidates = data["candidates"]
        repaired = [c["uid"] for c in candidates if c["selected"]]
        dropped = [c["uid"] for c in candidates if not c["selected"]]
        removed = sorted(data["roots"]) + dropped if data["type"] == "delete" else dropped
        all_cost = data["repair_all_cost"]
        return cls(
            would_withdraw=data["cascade"],
            would_repair=repaired,
            would_remove=removed,
            cost_vs_repair_all=data["cost"] / all_cost if all_cost else 0.0,
            plan=data,
            frontier=plan.frontier() if frontier else None,
        )


class MigrationResult(Result):
    """A tool migration: the event, the new interface and how its maps were found, then
    the plan (`dry_run`) or the repair's report."""

    event: str
    interface: dict[str, Any]
    inferred: dict[str, Any]
    unmapped: list[str]
    would_withdraw: list[str] | None = None
    would_repair: list[str] | None = None
    would_remove: list[str] | None = None
    cost_vs_repair_all: float | None = None
    plan: dict[str, Any] | None = None
    report: ReportResult | None = None


class EventSets(BaseModel):
    id: str
    sets: dict[str, list[dict[str, Any]]]


class StatusResult(Result):
    server: str
    principal: str
    artifacts: dict[str, int]
    open_events: list[dict[str, Any]]
    #: Batches a killed writer left unpublished (none of them served).
    open_imports: list[dict[str, Any]] = []
    withdrawn: list[dict[str, Any]]
    event: EventSets | None = None


class CheckResult(Result):
    ok: bool
    stale_served: list[dict[str, Any]]
    erasure: dict[str, Any] | None = None


class Exposure(BaseModel):
    """One withdrawn version read by one principal in one session, before the barrier."""

    uid: str
    version: int
    outcome: str
    root: bool
    published_at: str | None
    principal: str
    session: str | None
    reads: int
    first_at: str | None
    last_at: str | None


class PrincipalExposure(BaseModel):
    """One principal's reads of what the event withdrew, over all its sessions."""

    principal: str
    reads: int
    versions: list[str]
    sessions: list[str]
    first_at: str | None
    last_at: str | None


class ExposureResult(Result):
    """Who was served what an event withdrew: most exposed first, ids and times only."""

    event: str
    type: str | None
    by: str | None
    created_at: str | None
    barrier_at: str | None
    withdrawn: int
    exposed_versions: int
    reads: int
    principals: list[PrincipalExposure]
    exposures: list[Exposure]


class WhoamiResult(Result):
    """The principal a connection acts as, its session, and its roles in the namespace."""

    principal: str
    via: str
    session: str | None
    owner: bool
    roles: list[str]


def _result(result: Result) -> CallToolResult:
    """The structured result and the same as JSON text (datetimes as text)."""
    data = result.model_dump(by_alias=True, exclude_unset=True)
    text = json.dumps(data, indent=2, sort_keys=True, default=str)
    return CallToolResult(
        content=[TextContent(type="text", text=text)], structuredContent=json.loads(text)
    )


# ---- the tools -----------------------------------------------------------------------------
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

    def check_limits(self, *, k: int = 0, texts: tuple[Any, ...] = ()) -> None:
        """Refuse a call over the HTTP limits (`k`, content size) with a tool error."""
        if self.limits is not None:
            self.limits.check_k(k)
            self.limits.check_content(*(t if isinstance(t, str) else json.dumps(t) for t in texts))

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


class MemoryTools:
    """The tools: each method is one tool, a call of the `MemoryStore` method `TOOLS`
    names on the store of the namespace it is given."""

    def __init__(self, memories: Memories) -> None:
        self._memories = memories

    async def _call(
        self, namespace: str | None, work: Callable[[MemoryStore], Result]
    ) -> CallToolResult:
        """Blocking API work on a worker thread, acting as the caller (read here, in the
        request's context); its result names the namespace."""
        who = self._memories.who()

        def call() -> CallToolResult:
            memory = self._memories.get(namespace, who)
            result = work(memory)
            result.namespace = memory.ns
            return _result(result)

        return await anyio.to_thread.run_sync(call)

    async def memory_search(
        self,
        query: str,
        k: int = 10,
        kinds: list[Kind] | None = None,
        meta: dict[str, MetaValue] | None = None,
        since: str | None = None,
        until: str | None = None,
        mode: SearchMode = "hybrid",
        related: bool = False,
        namespace: str | None = None,
    ) -> Annotated[CallToolResult, SearchResult]:
        """Find memories relevant to a question, by meaning and by words (best first).

        Only memories that are currently valid are returned: nothing withdrawn,
        superseded or forgotten, also while a repair is running. Each hit has `pin`
        (`uid@version`): cite it in `inputs` when you record something you derived from
        it. `kinds` narrows to record/cache/summary/skill; `meta` to exact values of the
        fields the server makes searchable; `since`/`until` are ISO 8601 times;
        `related` adds the hits' related memories.
        """
        self._memories.check_limits(k=k)

        def work(memory: MemoryStore) -> SearchResult:
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
            return SearchResult(hits=[SearchHit.of(hit) for hit in hits])

        return await self._call(namespace, work)

    async def memory_get(
        self, uid: str, namespace: str | None = None
    ) -> Annotated[CallToolResult, GetResult]:
        """Read one memory by uid: its currently served version, or `found: false`.

        `found: false` means it is not valid now (forgotten, withdrawn by a repair, or
        never recorded): do not use what you remember of it; memory_lineage says why.
        """

        def work(memory: MemoryStore) -> GetResult:
            found = memory.retrieve(uid=uid)
            if not found:
                return GetResult(found=False, uid=uid)
            return GetResult(found=True, artifact=ArtifactOut.of(found[0]))

        return await self._call(namespace, work)

    async def memory_lineage(
        self, uid: str, namespace: str | None = None
    ) -> Annotated[CallToolResult, LineageResult]:
        """Every version of one memory: its inputs, visibility (Live = served), and the
        repair events that withdrew, replaced or republished it. Use it to explain why a
        memory is gone or what an answer was based on."""
        return await self._call(
            namespace, lambda memory: LineageResult(uid=uid, versions=memory.lineage(uid))
        )

    async def memory_record(
        self,
        uid: str,
        content: str,
        kind: Kind = Kind.RECORD,
        arch: Arch | None = None,
        inputs: list[str] | None = None,
        meta: dict[str, Any] | None = None,
        on_stale: Literal["withdraw", "refuse"] = "withdraw",
        namespace: str | None = None,
    ) -> Annotated[CallToolResult, RecordResult]:
        """Record a new memory with its provenance.

        `kind`: `record` for what you observed (a user turn, a tool's output), `summary`
        for what you derived, `skill` (with `arch`: `prompt`, `chain` or `neural`) for a
        reusable procedure, `cache` for a replayable result. `inputs`: the uids it was
        derived from, best pinned as `uid@version` (the `pin` memory_search/memory_get
        gave you): if a pinned input changed since you read it, the new memory is not
        served (`served: false`) or, with on_stale="refuse", refused; if that input was
        erased (a memory_forget, running or done), your text is not stored either
        (`redacted` names the input and the event): do not record it again. A uid is
        recorded once; change it with memory_update.
        """
        item: dict[str, Any] = {"uid": uid, "kind": kind, "content": content}
        for key, value in (("arch", arch), ("inputs", inputs), ("meta", meta)):
            if value is not None:
                item[key] = value
        self._memories.check_limits(texts=(content, meta))

        def work(memory: MemoryStore) -> RecordResult:
            row = memory.record(item, on_stale=on_stale)
            version = int(row["vid"].rsplit("@", 1)[1])  # a new uid's first version
            return RecordResult(**row, served=bool(row["live"]), pin=pin(uid, version))

        return await self._call(namespace, work)

    async def tool_register(
        self, tool: str, schema: Any, uid: str | None = None, namespace: str | None = None
    ) -> Annotated[CallToolResult, RecordResult]:
        """Record a tool's interface (its schema: MCP `tools/list` entries, OpenAI function
        definitions, or {function: JSON Schema}) as memory `tool:<name>`. List that uid in
        the `inputs` of what you derive from the tool's calls: when the tool's API
        changes, tool_migrated repairs exactly those memories."""

        def work(memory: MemoryStore) -> RecordResult:
            row = memory.record_interface(tool, schema, uid=uid)
            return RecordResult(**row, served=bool(row["live"]))

        return await self._call(namespace, work)

    async def memory_update(
        self,
        uid: str,
        content: str | None = None,
        meta: dict[str, Any] | None = None,
        inputs: list[str] | None = None,
        reason: str = "",
        namespace: str | None = None,
    ) -> Annotated[CallToolResult, ReportResult]:
        """Change a memory you recorded: it gets a new version, and every memory derived
        from the old one is withdrawn at once and rebuilt from the new one (or removed).
        What you leave out (content, meta, inputs) is kept. The result lists what was
        republished, removed and, under `stranded`, what could not be repaired."""
        self._memories.check_limits(texts=(content, meta))
        return await self._call(
            namespace,
            lambda memory: ReportResult.of(
                memory.update(uid, content=content, meta=meta, inputs=inputs, reason=reason)
            ),
        )

    async def memory_correct(
        self,
        corrections: list[dict[str, Any]],
        reason: str = "",
        erase: bool = False,
        namespace: str | None = None,
    ) -> Annotated[CallToolResult, ReportResult]:
        """A source was wrong: replace one or more memories in one repair event. Each
        correction is {"uid", "content", "meta"?, "inputs"?}. Everything derived from the
        wrong versions is withdrawn and rebuilt from the corrected ones. `erase=true`
        also erases the wrong text everywhere (as memory_forget does)."""
        self._memories.check_limits(texts=(corrections,))
        return await self._call(
            namespace,
            lambda memory: ReportResult.of(memory.correct(corrections, reason=reason, erase=erase)),
        )

    async def memory_forget(
        self,
        uids: list[str],
        reason: str = "",
        event_id: str | None = None,
        namespace: str | None = None,
    ) -> Annotated[CallToolResult, ReportResult]:
        """Forget memories for good (e.g. a user's erasure request). Before this returns,
        they and everything derived from them stop being served; derived memories that
        what remains can rebuild are republished, the rest removed, and the forgotten
        text is erased everywhere. Look first with repair_plan if unsure. `event_id`
        makes a retry of the same request safe (same id = same event)."""
        return await self._call(
            namespace,
            lambda memory: ReportResult.of(memory.forget(uids, reason=reason, event_id=event_id)),
        )

    async def tool_migrated(
        self,
        tool: str,
        new_schema: Any,
        old_schema: Any = None,
        renames: dict[str, str] | None = None,
        param_renames: dict[str, dict[str, str]] | None = None,
        interface_uids: list[str] | None = None,
        dry_run: bool = False,
        reason: str = "",
        namespace: str | None = None,
    ) -> Annotated[CallToolResult, MigrationResult]:
        """A tool's API changed: repair the memories derived from its old interface.

        Give the new schema (same forms as tool_register); the old one defaults to the
        recorded interface. Renamed functions (`renames`: old -> new) and parameters
        (`param_renames`: old function -> {old param -> new}) are inferred when the two
        schemas leave no doubt; the result shows what was inferred and what stayed
        unmapped: give the maps yourself if that is wrong. `dry_run=true` returns the
        plan without changing anything.
        """

        def work(memory: MemoryStore) -> MigrationResult:
            spec, migration, outcome = memory.migrate_tool(
                tool,
                new_schema,
                old_schema=old_schema,
                roots=interface_uids,
                renames=renames,
                param_renames=param_renames,
                reason=reason,
                dry_run=dry_run,
            )
            found = {"event": spec.id, **migration.as_dict()}
            if isinstance(outcome, Plan):
                planned = PlanResult.of(outcome).model_dump(exclude={"namespace"})
                return MigrationResult(**found, **planned)
            return MigrationResult(**found, report=ReportResult.of(outcome))

        return await self._call(namespace, work)

    async def repair_plan(
        self,
        forget: list[str] | None = None,
        event: dict[str, Any] | None = None,
        namespace: str | None = None,
        frontier: bool = False,
    ) -> Annotated[CallToolResult, PlanResult]:
        """Dry run, changes nothing: what forgetting `forget` (or running `event`, a
        MemoRepair event: {"type": "delete"|"correct"|"migrate", "roots", ...}) would
        withdraw, which derived memories would be rebuilt and which removed, and its cost
        against rebuilding everything. `frontier`: also every selection the repair would
        make as lambda (reads per second of repair) grows, with value (reads), cost
        (seconds) and what each step skips."""
        if (forget is None) == (event is None):
            raise InputError("repair_plan: give either `forget` (uids) or `event`, not both")
        spec = dict(event) if event is not None else {"type": "delete", "roots": forget}
        spec.setdefault("id", "plan")
        return await self._call(
            namespace, lambda memory: PlanResult.of(memory.plan(spec), frontier=frontier)
        )

    async def repair_status(
        self, event_id: str | None = None, namespace: str | None = None
    ) -> Annotated[CallToolResult, StatusResult]:
        """Memories by state (served, withdrawn, superseded, removed), repairs still
        running, and what stays withdrawn and why. With `event_id`: that repair's
        outcome per memory (published, removed, failed, blocked, ...)."""
        return await self._call(
            namespace, lambda memory: StatusResult.model_validate(memory.status(event_id))
        )

    async def audit_check(
        self, erasure_event_id: str | None = None, namespace: str | None = None
    ) -> Annotated[CallToolResult, CheckResult]:
        """Check the guarantee: no served memory depends on withdrawn or forgotten
        support (`ok`). With `erasure_event_id` (a memory_forget's `event`): also prove
        that no copy of the forgotten text is left anywhere."""
        return await self._call(
            namespace, lambda memory: CheckResult.model_validate(memory.check(erasure_event_id))
        )

    async def audit_exposure(
        self, event_id: str, namespace: str | None = None
    ) -> Annotated[CallToolResult, ExposureResult]:
        """Who was served what a repair event withdrew, before it did (auditor role): for
        each withdrawn version that was read, which principal in which session, how many
        reads, first and last time, most read first; and totals per principal. Ids and
        times only. Use it after memory_forget / memory_correct to find the agents that
        acted on the wrong memory."""
        return await self._call(
            namespace, lambda memory: ExposureResult.model_validate(memory.exposure(event_id))
        )

    async def whoami(self, namespace: str | None = None) -> Annotated[CallToolResult, WhoamiResult]:
        """Which principal this connection acts as, and its roles in the namespace
        (reader: search/get/lineage; writer: record/update; curator: forget/correct/
        migrate; auditor: audit/plan/status/exposure; admin: all)."""
        return await self._call(
            namespace, lambda memory: WhoamiResult.model_validate(memory.whoami())
        )


# ---- the server ----------------------------------------------------------------------------
class _Server(FastMCP):
    """FastMCP whose tool errors from MemoRepair carry the CLI's one-line message alone
    (FastMCP would prefix it): the one place a MemoRepair error becomes a tool error."""

    async def call_tool(
        self, name: str, arguments: dict[str, Any]
    ) -> Sequence[ContentBlock] | dict[str, Any]:
        try:
            return await super().call_tool(name, arguments)
        except ToolError as exc:
            if isinstance(exc.__cause__, MemoRepairError):
                message = str(exc.__cause__)
                error = CallToolResult(
                    content=[TextContent(type="text", text=message)], isError=True
                )
                return error  # type: ignore[return-value]  # the low-level server passes it on
            raise


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
    server = _Server(
        SERVER_NAME,
        instructions=INSTRUCTIONS,
        host=host,
        port=port,
        lifespan=lifespan,
        log_level="WARNING",  # stderr stays quiet: hosts show it to users
        **extra,
    )
    memories.who = _who_of(server, authenticated=auth is not None)
    tools = MemoryTools(memories)
    for name, spec in TOOLS.items():
        server.add_tool(getattr(tools, name), name=name, annotations=spec.annotations)
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
