"""The worked example of docs/agents.md: an agent's memory through MemoRepair's MCP tools.

Run (a Neo4j as in the README, the `mcp` extra installed):

    MEMOREPAIR_SAMPLE_TOOLS=true python docs/agent_loop.py [NAMESPACE]

It spawns `memorepair --ns NAMESPACE mcp` over stdio with the SDK's own client, as any
MCP host does, and plays a travel agent: it records what the user said, a tool call and
its output, a summary and a prompt skill with their provenance, then gets the user's
erasure request and the currency tool's API change, and shows what it can and cannot
retrieve afterwards. The namespace (default `agent-demo`) is cleared first.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from memorepair.api import open_store

NS = sys.argv[1] if len(sys.argv) > 1 else "agent-demo"
TURNS = {
    "turn-1": "Ana plans a trip to Zurich in May and budgets 1200 EUR.",
    "turn-2": "Ana's hotel in Zurich is the Seehof, 180 CHF per night.",
    "turn-3": "Ana prefers prices shown in CHF while she is in Switzerland.",
}
CONVERT_V1 = {
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
CONVERT_V2 = {
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
CALL = {"function": "convert", "args": {"amount": 1200, "from_currency": "EUR", "to_currency": "CHF"}}


async def tool(session: ClientSession, name: str, /, **arguments: Any) -> dict[str, Any]:
    """Call one MemoRepair tool and return its JSON result (a tool error stops the demo)."""
    result = await session.call_tool(name, arguments)
    text = "".join(getattr(block, "text", "") for block in result.content)
    if result.isError:
        raise SystemExit(f"{name} failed: {text}")
    return dict(json.loads(text))


def show(label: str, value: Any) -> None:
    print(f"{label:<28} {value}")


async def remember(session: ClientSession) -> None:
    """The agent's first session: observe, call a tool, summarise, distil a skill."""
    print("== the agent records what it learns, with provenance")
    await tool(session, "tool_register", tool="currency", schema=[CONVERT_V1])
    for uid, text in TURNS.items():
        row = await tool(session, "memory_record", uid=uid, content=text, meta={"speaker": "user"})
        show(f"memory_record {uid}", f"pin {row['pin']}")
    await tool(
        session, "memory_record", uid="call-1", content=json.dumps(CALL), inputs=["turn-1@1"],
        meta={"tool": "currency", "call": CALL},
    )
    await tool(
        session, "memory_record", uid="skill-convert", kind="skill", arch="chain",
        content=json.dumps({"tool": "currency", "steps": [CALL]}),
        inputs=["call-1@1", "tool:currency@1"], meta={"tool": "currency"},
    )
    hits = (await tool(session, "memory_search", query="Ana trip Zurich hotel prices", k=5))["hits"]
    show("memory_search", ", ".join(h["pin"] for h in hits))
    pins = sorted(h["pin"] for h in hits if h["uid"].startswith("turn-"))
    lines = [f"- {TURNS[p.split('@')[0]]} [{p.replace('@', '@v')}]" for p in pins]
    row = await tool(session, "memory_record", uid="sum-ana", kind="summary",
                     content="\n".join(lines), inputs=pins)
    show("memory_record sum-ana", f"inputs {pins} -> served {row['served']}")
    await tool(
        session, "memory_record", uid="skill-prices", kind="skill", arch="prompt",
        content=f"# Skill: Quote prices\n- Show prices in CHF in Switzerland. [turn-3@v1]",
        inputs=["turn-3@1"],
        meta={"title": "Quote prices", "instruction": "Show prices in CHF in Switzerland."},
    )
    show("memory_record skill-prices", "a prompt skill derived from turn-3")


async def erasure(session: ClientSession) -> None:
    print("\n== the user asks to erase what she said about her hotel (turn-2)")
    plan = await tool(session, "repair_plan", forget=["turn-2"])
    show("repair_plan", f"would withdraw {plan['would_withdraw']}, rebuild "
         f"{plan['would_repair']}, remove {plan['would_remove']}")
    report = await tool(session, "memory_forget", uids=["turn-2"], reason="erasure request #1042")
    show("memory_forget", f"{report['event']}: {report['status']}, complete {report['complete']}")
    show("  published / removed", f"{report['outcomes']['published']} / "
         f"{report['outcomes']['removed'] + report['outcomes']['root_deleted']}")
    audit = await tool(session, "audit_check", erasure_event_id=report["event"])
    show("audit_check", f"ok {audit['ok']}; erasure scanned "
         f"{audit['erasure']['scanned']['nodes']} nodes, copies {len(audit['erasure']['copies'])}")


async def migration(session: ClientSession) -> None:
    print("\n== the currency tool renames convert(amount, from_currency, to_currency)")
    dry = await tool(session, "tool_migrated", tool="currency", new_schema=[CONVERT_V2],
                     dry_run=True)
    show("tool_migrated dry_run", f"inferred {dry['inferred']}")
    show("", f"would withdraw {dry['would_withdraw']}")
    done = await tool(session, "tool_migrated", tool="currency", new_schema=[CONVERT_V2])
    report = done["report"]
    show("tool_migrated", f"{report['event']}: published {report['outcomes']['published']}")


async def afterwards(session: ClientSession) -> None:
    print("\n== what the agent can and cannot retrieve now")
    for uid in ("turn-2", "sum-ana", "skill-prices", "skill-convert", "call-1"):
        got = await tool(session, "memory_get", uid=uid)
        if not got["found"]:
            show(f"memory_get {uid}", "found: false (not served)")
            continue
        art = got["artifact"]
        show(f"memory_get {uid}", f"{art['pin']}: {art['content']!r}")
    hits = (await tool(session, "memory_search", query="Seehof hotel 180 CHF per night", k=10))[
        "hits"
    ]
    show("memory_search 'Seehof ...'", [h["pin"] for h in hits])
    show("  any hit quoting Seehof", any("Seehof" in h["content"] for h in hits))
    lineage = await tool(session, "memory_lineage", uid="sum-ana")
    for row in lineage["versions"]:
        show(f"  sum-ana v{row['version']}", f"{row['visibility']}, inputs {row['inputs']}")
    status = await tool(session, "repair_status")
    show("repair_status", f"{status['artifacts']}, open events {status['open_events']}")


async def main() -> None:
    with open_store(ns=NS) as memory:
        memory.clear()
    command = shutil.which("memorepair", path=str(Path(sys.executable).parent)) or "memorepair"
    server = StdioServerParameters(command=command, args=["--ns", NS, "mcp"], env=dict(os.environ))
    async with stdio_client(server) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        names = [t.name for t in (await session.list_tools()).tools]
        print(f"MCP tools: {', '.join(names)}\n")
        await remember(session)
        await erasure(session)
        await migration(session)
        await afterwards(session)


if __name__ == "__main__":
    asyncio.run(main())
