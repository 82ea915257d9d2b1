"""MemoRepair as an MCP server: the memory an agent reads and writes through tools.

`memorepair mcp` serves these tools over stdio (or streamable HTTP on 127.0.0.1 with
`--http`), built with the official SDK's `FastMCP` (the `mcp` extra, pinned below 2). Each
tool is a thin call of `memorepair.api.MemoryStore`, so it behaves exactly as the CLI
command of the same job; its docstring is what the calling model reads. Results are JSON
objects; a MemoRepair error comes back as a tool error carrying the CLI's one-line
message. Every tool takes an optional `namespace` (default: the server's, from `--ns` or
MEMOREPAIR_NAMESPACE); one connection serves them all.

What no other memory server offers, and the reason to use this one: `memory_forget`
withdraws everything derived from what is forgotten before it returns, `repair_plan`
shows that set without touching it, and `memory_lineage` / `audit_check` show what was
served and on what support.
"""

from __future__ import annotations

import json
import threading
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from typing import Any, Literal

import anyio
from mcp.server.fastmcp import FastMCP
from mcp.types import CallToolResult, TextContent, ToolAnnotations

from memorepair.api import MemoryStore, open_store
from memorepair.errors import MemoRepairError
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


class Memories:
    """One MemoryStore per namespace the clients use, over one connection opened on first
    use (so a client can list the tools before Neo4j is up)."""

    def __init__(self, opener: Callable[[], MemoryStore]) -> None:
        self._opener = opener
        self._base: MemoryStore | None = None
        self._by_ns: dict[str, MemoryStore] = {}
        self._lock = threading.Lock()

    def get(self, namespace: str | None) -> MemoryStore:
        with self._lock:
            if self._base is None:
                self._base = self._opener()
            ns = namespace or self._base.ns
            if ns not in self._by_ns:
                self._by_ns[ns] = self._base.namespace(ns)
            return self._by_ns[ns]

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

    def call() -> Mapping[str, Any]:
        memory = memories.get(namespace)
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


def planned_json(memory: MemoryStore, spec: dict[str, Any], frontier: bool) -> dict[str, Any]:
    """``repair_plan``'s answer: the plan (``plan_json``), with its frontier if asked."""
    planned = memory.plan({"id": "plan", **spec})
    data = plan_json(planned.as_dict())
    if frontier:
        data["frontier"] = planned.frontier()
    return data


def build_server(
    opener: Callable[[], MemoryStore],
    *,
    port: int = DEFAULT_PORT,
) -> FastMCP:
    """The MCP server over a store opened by `opener` on first use; closed at shutdown."""
    memories = Memories(opener)

    @asynccontextmanager
    async def lifespan(_: FastMCP) -> AsyncIterator[None]:
        try:
            yield
        finally:
            memories.close()

    server = FastMCP(
        SERVER_NAME,
        instructions=INSTRUCTIONS,
        host="127.0.0.1",
        port=port,
        lifespan=lifespan,
        log_level="WARNING",  # stderr stays quiet: hosts show it to users
    )
    for tool, hints in _tools(memories):
        server.add_tool(tool, name=tool.__name__, annotations=hints)
    return server


def serve(
    settings: Settings, *, ns: str | None = None, http: bool = False, port: int = DEFAULT_PORT
) -> None:
    """Run the server until the client closes stdio (or until interrupted, for HTTP)."""
    server = build_server(lambda: open_store(ns=ns, settings=settings), port=port)
    server.run("streamable-http" if http else "stdio")


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

    async def memory_lineage(uid: str, namespace: str | None = None) -> CallToolResult:
        """Every version of one memory: its inputs, visibility (Live = served), and the
        repair events that withdrew, replaced or republished it. Use it to explain why a
        memory is gone or what an answer was based on."""
        return await _run(memories, namespace, lambda m: {"uid": uid, "versions": m.lineage(uid)})

    return [(memory_search, READ_ONLY), (memory_get, READ_ONLY), (memory_lineage, READ_ONLY)]


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
        return await _run(
            memories,
            namespace,
            lambda m: report_json(m.correct(corrections, reason=reason, erase=erase)),
        )

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

    return [
        (memory_update, DESTRUCTIVE),
        (memory_correct, DESTRUCTIVE),
        (memory_forget, DESTRUCTIVE),
    ]


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
        frontier: bool = False,
    ) -> CallToolResult:
        """Dry run, changes nothing: what forgetting `forget` (or running `event`, a
        MemoRepair event: {"type": "delete"|"correct"|"migrate", "roots", ...}) would
        withdraw, which derived memories would be rebuilt and which removed, and its cost
        against rebuilding everything. `frontier`: also every selection the repair would
        make as lambda (reads per second of repair) grows, with value (reads), cost
        (seconds) and what each step skips."""
        if (forget is None) == (event is None):
            return _error("repair_plan: give either `forget` (uids) or `event`, not both")

        spec = dict(event) if event is not None else {"type": "delete", "roots": forget}
        return await _run(memories, namespace, lambda m: planned_json(m, spec, frontier))

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

    return [(repair_plan, READ_ONLY), (repair_status, READ_ONLY), (audit_check, READ_ONLY)]
