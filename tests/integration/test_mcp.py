"""The MCP server, driven as a client would: the SDK's own client over stdio, spawning
`memorepair mcp` as a child process, then the graph checked through the API."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.types import CallToolResult
from tests.servers import free_port

from memorepair.api import MemoryStore
from memorepair.errors import MemoRepairError

ROOT = Path(__file__).resolve().parents[2]
TOOLS = {
    "memory_search",
    "memory_get",
    "memory_record",
    "memory_update",
    "memory_forget",
    "memory_correct",
    "tool_register",
    "tool_migrated",
    "repair_plan",
    "repair_status",
    "memory_lineage",
    "audit_check",
    "audit_exposure",
    "whoami",
}
PREF = "Ana prefers prices shown in CHF while she is in Switzerland."
HOTEL = "Ana's hotel in Zurich costs 180 CHF per night."
TRIP = "Ana plans a trip to Zurich in May and budgets 1200 EUR."


def _command() -> str:
    found = shutil.which("memorepair", path=str(Path(sys.executable).parent))
    assert found, "the memorepair script is not installed in this environment"
    return found


def with_server(
    memory: MemoryStore, session_work: Callable[[ClientSession], Awaitable[Any]]
) -> Any:
    """Start `memorepair --ns NS mcp` over stdio, run `session_work`, stop the server."""
    params = StdioServerParameters(
        command=_command(), args=["--ns", memory.ns, "mcp"], env=dict(os.environ), cwd=ROOT
    )

    async def main() -> Any:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            return await session_work(session)

    return asyncio.run(main())


async def call(session: ClientSession, name: str, /, **arguments: Any) -> dict[str, Any]:
    result = await session.call_tool(name, arguments)
    assert not result.isError, f"{name}: {text_of(result)}"
    assert result.structuredContent is not None
    assert json.loads(text_of(result)) == result.structuredContent
    return result.structuredContent


def text_of(result: CallToolResult) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


def test_tools_are_listed_with_annotations(memory: MemoryStore) -> None:
    async def work(session: ClientSession) -> Any:
        return (await session.list_tools()).tools

    tools = {tool.name: tool for tool in with_server(memory, work)}
    assert set(tools) == TOOLS
    for name in ("memory_search", "memory_get", "repair_plan", "repair_status", "audit_check"):
        hints = tools[name].annotations
        assert hints is not None and hints.readOnlyHint is True, name
    for name in ("memory_forget", "memory_update", "memory_correct", "tool_migrated"):
        hints = tools[name].annotations
        assert hints is not None and hints.destructiveHint is True and not hints.readOnlyHint
    record = tools["memory_record"]
    assert record.annotations is not None and record.annotations.destructiveHint is False
    assert "namespace" in record.inputSchema["properties"]
    assert "inputs" in record.inputSchema["properties"]
    assert "uid@version" in (record.description or "")


def test_record_search_plan_forget_status_lineage(memory: MemoryStore) -> None:
    async def work(session: ClientSession) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for uid, content in (("pref", PREF), ("hotel", HOTEL), ("trip", TRIP)):
            row = await call(session, "memory_record", uid=uid, content=content)
            assert row["served"] and row["pin"] == f"{uid}@1"
        summary = f"- {PREF} [pref@v1]\n- {HOTEL} [hotel@v1]\n- {TRIP} [trip@v1]"
        out["summary"] = await call(
            session,
            "memory_record",
            uid="sum-ana",
            kind="summary",
            content=summary,
            inputs=["pref@1", "hotel@1", "trip@1"],
        )
        out["search"] = await call(session, "memory_search", query="Ana prices in CHF", k=5)
        out["plan"] = await call(session, "repair_plan", forget=["hotel"])
        out["frontier"] = await call(session, "repair_plan", forget=["hotel"], frontier=True)
        out["events_after_plan"] = len(memory.audit_events())
        out["forget"] = await call(
            session, "memory_forget", uids=["hotel"], reason="erasure request #7"
        )
        out["after"] = await call(session, "memory_search", query="hotel in Zurich per night", k=10)
        out["get_hotel"] = await call(session, "memory_get", uid="hotel")
        out["get_summary"] = await call(session, "memory_get", uid="sum-ana")
        out["status"] = await call(session, "repair_status", event_id=out["forget"]["event"])
        out["lineage"] = await call(session, "memory_lineage", uid="sum-ana")
        out["audit"] = await call(session, "audit_check", erasure_event_id=out["forget"]["event"])
        return out

    out = with_server(memory, work)
    assert out["summary"]["served"] and out["summary"]["namespace"] == memory.ns
    pins = [hit["pin"] for hit in out["search"]["hits"]]
    assert "pref@1" in pins and "sum-ana@1" in pins

    plan = out["plan"]
    assert set(plan["would_withdraw"]) == {"hotel", "sum-ana"}
    assert plan["would_repair"] == ["sum-ana"] and "hotel" in plan["would_remove"]
    assert out["events_after_plan"] == 0  # a plan writes nothing
    steps = out["frontier"]["frontier"]["steps"]
    assert plan["frontier"] is None and steps[0]["lambda_from"] == 0
    assert [s["selected"] for s in steps] == [1, 0] and steps[1]["skips"] == ["sum-ana"]
    assert sum(s["default"] for s in steps) == 1

    report = out["forget"]
    assert report["status"] == "completed" and report["complete"] is True
    assert report["outcomes"]["published"] == ["sum-ana"]
    assert out["get_hotel"] == {"found": False, "namespace": memory.ns, "uid": "hotel"}
    repaired = out["get_summary"]["artifact"]
    assert repaired["version"] == 2 and "180 CHF" not in repaired["content"]
    assert PREF in repaired["content"] and TRIP in repaired["content"]
    served = {(hit["uid"], hit["version"]) for hit in out["after"]["hits"]}
    assert ("hotel", 1) not in served and ("sum-ana", 1) not in served
    assert all("180 CHF" not in hit["content"] for hit in out["after"]["hits"])

    assert out["status"]["open_events"] == []
    assert {a["uid"] for a in out["status"]["event"]["sets"]["published"]} == {"sum-ana"}
    assert [v["visibility"] for v in out["lineage"]["versions"]] == ["Superseded", "Live"]
    assert out["audit"]["ok"] is True and out["audit"]["erasure"]["ok"] is True

    # the graph, read through the API, agrees with what the tools said
    assert memory.retrieve(uid="hotel") == []
    (summary,) = memory.retrieve(uid="sum-ana")
    assert summary.version == 2 and summary.inputs == ["pref", "trip"]
    assert memory.stale_served() == []
    assert memory.counts()["live"] == 3


def test_errors_are_tool_errors_with_the_cli_message(memory: MemoryStore) -> None:
    with pytest.raises(MemoRepairError) as expected:
        memory.update("nobody", content="x")

    async def work(session: ClientSession) -> list[CallToolResult]:
        return [
            await session.call_tool("memory_update", {"uid": "nobody", "content": "x"}),
            await session.call_tool("memory_forget", {"uids": ["nobody"]}),
            await session.call_tool(
                "memory_record", {"uid": "bad uid", "kind": "record", "content": "x"}
            ),
            await session.call_tool("repair_plan", {}),
        ]

    update, forget, record, plan = with_server(memory, work)
    assert update.isError and text_of(update) == str(expected.value)
    assert forget.isError and "nobody" in text_of(forget) and "\n" not in text_of(forget)
    assert record.isError and text_of(record).startswith("artifact 'bad uid': field 'uid'")
    assert plan.isError and "give either" in text_of(plan)
    assert memory.counts()["live"] == 0 and memory.audit_events() == []


def test_pinned_input_read_before_an_update_is_not_served(memory: MemoryStore) -> None:
    async def work(session: ClientSession) -> dict[str, Any]:
        await call(session, "memory_record", uid="fact", content="The museum opens at 9.")
        update = await call(session, "memory_update", uid="fact", content="It opens at 10.")
        late = await call(
            session,
            "memory_record",
            uid="note",
            kind="summary",
            content="- The museum opens at 9. [fact@v1]",
            inputs=["fact@1"],
        )
        refused = await session.call_tool(
            "memory_record",
            {
                "uid": "note2",
                "content": "x",
                "kind": "summary",
                "inputs": ["fact@1"],
                "on_stale": "refuse",
            },
        )
        return {"update": update, "late": late, "refused": refused}

    out = with_server(memory, work)
    assert out["update"]["complete"] is True
    assert out["late"]["served"] is False
    assert out["refused"].isError and "fact" in text_of(out["refused"])
    assert memory.retrieve(uid="note") == [] and memory.retrieve(uid="note2") == []


def test_tool_migrated_infers_the_renames_and_repairs(memory: MemoryStore) -> None:
    old = [
        {
            "name": "convert",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "amount": {"type": "number"},
                    "from_currency": {"type": "string"},
                    "to_currency": {"type": "string"},
                },
                "required": ["amount", "from_currency", "to_currency"],
            },
        }
    ]
    new = [
        {
            "name": "convert_amount",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "value": {"type": "number"},
                    "source": {"type": "string"},
                    "target": {"type": "string"},
                },
                "required": ["value", "source", "target"],
            },
        }
    ]
    chain = json.dumps(
        {
            "tool": "currency",
            "steps": [
                {
                    "function": "convert",
                    "args": {"amount": 100, "from_currency": "EUR", "to_currency": "CHF"},
                }
            ],
        }
    )

    async def work(session: ClientSession) -> dict[str, Any]:
        registered = await call(session, "tool_register", tool="currency", schema=old)
        await call(
            session,
            "memory_record",
            uid="skill-convert",
            kind="skill",
            arch="chain",
            content=chain,
            inputs=["tool:currency"],
            meta={"tool": "currency"},
        )
        dry = await call(session, "tool_migrated", tool="currency", new_schema=new, dry_run=True)
        events_after_dry = len(memory.audit_events())
        done = await call(session, "tool_migrated", tool="currency", new_schema=new)
        skill = await call(session, "memory_get", uid="skill-convert")
        return {
            "registered": registered,
            "dry": dry,
            "n": events_after_dry,
            "done": done,
            "skill": skill,
        }

    out = with_server(memory, work)
    assert out["registered"]["vid"].endswith("tool:currency@1")
    assert out["dry"]["inferred"] == {
        "renames": {"convert": "convert_amount"},
        "param_renames": {
            "convert": {"amount": "value", "from_currency": "source", "to_currency": "target"}
        },
    }
    assert out["dry"]["unmapped"] == []
    assert set(out["dry"]["would_withdraw"]) == {"tool:currency", "skill-convert"}
    assert out["n"] == 0
    report = out["done"]["report"]
    assert report["status"] == "completed"
    # the sample `currency` back-end (MEMOREPAIR_SAMPLE_TOOLS, set by conftest) validates it
    assert report["complete"] is True and report["outcomes"]["published"] == ["skill-convert"]
    steps = json.loads(out["skill"]["artifact"]["content"])["steps"]
    assert steps == [
        {"function": "convert_amount", "args": {"value": 100, "source": "EUR", "target": "CHF"}}
    ]
    (iface,) = memory.retrieve(uid="tool:currency")
    assert iface.version == 2 and "convert_amount" in iface.content
    assert memory.stale_served() == []


def test_streamable_http_on_loopback(memory: MemoryStore, tmp_path: Path) -> None:
    """`memorepair mcp --http`: refused with no way to authenticate; with the development
    flag, on loopback, the SDK's HTTP client lists the tools and reads memory."""
    import socket
    import subprocess
    import time

    from mcp.client.streamable_http import streamablehttp_client

    env = {**os.environ, "MEMOREPAIR_PRINCIPALS_FILE": str(tmp_path / "none.json")}
    env.pop("MEMOREPAIR_AUTH_ISSUER", None)
    refused = subprocess.run(
        [_command(), "--ns", memory.ns, "mcp", "--http", "--port", "1"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert refused.returncode == 1 and "needs a way to authenticate" in refused.stderr
    public = subprocess.run(
        [_command(), "mcp", "--http", "--dev-no-auth", "--host", "0.0.0.0"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert public.returncode == 1 and "only on loopback" in public.stderr

    memory.record({"uid": "fact", "kind": "record", "content": "The museum opens at 9."})
    port = free_port()
    proc = subprocess.Popen(
        [_command(), "--ns", memory.ns, "mcp", "--http", "--dev-no-auth", "--port", str(port)],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        for _ in range(300):  # wait until it listens (bounded: 30 s)
            with socket.socket() as sock:
                if sock.connect_ex(("127.0.0.1", port)) == 0:
                    break
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
            time.sleep(0.1)

        async def main() -> tuple[set[str], dict[str, Any]]:
            url = f"http://127.0.0.1:{port}/mcp"
            async with (
                streamablehttp_client(url) as (read, write, _),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                names = {tool.name for tool in (await session.list_tools()).tools}
                return names, await call(session, "memory_get", uid="fact")

        names, got = asyncio.run(main())
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    assert names == TOOLS
    assert got["found"] is True and got["artifact"]["pin"] == "fact@1"


def test_the_printed_host_config_starts_the_server_from_an_empty_folder(
    memory: MemoryStore, tmp_path: Path
) -> None:
    """What `memorepair mcp --print-config` prints, pasted into a host's configuration,
    works as written: the SDK's stdio client starts it from an empty folder with only the
    host's default environment plus the entry's `env`, as MCP hosts do."""
    printed = subprocess.run(
        [_command(), "--ns", memory.ns, "mcp", "--print-config"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert printed.returncode == 0, printed.stderr
    entry = json.loads(printed.stdout)["mcpServers"]["memory"]
    assert Path(entry["command"]).is_absolute()
    assert entry["args"] == ["--ns", memory.ns, "mcp"]
    host = tmp_path / "host"
    host.mkdir()
    params = StdioServerParameters(
        command=entry["command"], args=entry["args"], env=entry["env"], cwd=host
    )

    async def main() -> dict[str, Any]:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            await call(session, "memory_record", uid="pref", content=PREF)
            return await call(session, "memory_get", uid="pref")

    got = asyncio.run(main())
    assert got["found"] is True and got["artifact"]["content"] == PREF
    assert [a.uid for a in memory.retrieve(uid="pref")] == ["pref"]
    assert list(host.iterdir()) == []  # nothing written where the host started it
