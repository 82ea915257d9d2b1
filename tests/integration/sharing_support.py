"""The shared MCP server for the sharing tests: `memorepair mcp --http` in a child
process, authenticating against a JWT issuer on loopback and a principals file; clients
are the SDK's own, with a bearer token each."""

from __future__ import annotations

import asyncio
import ctypes
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CallToolResult

from memorepair import queries
from memorepair.access import covers
from memorepair.api import MemoryStore

ROOT = Path(__file__).resolve().parents[2]
CENSUS = queries.named("census", root=ROOT / "tests" / "cypher", label="tests/cypher")
#: How long the server buffers what it served before writing it (MEMOREPAIR_USE_FLUSH_S).
FLUSH_S = 0.2


def command() -> str:
    found = shutil.which("memorepair", path=str(Path(sys.executable).parent))
    assert found, "the memorepair script is not installed in this environment"
    return found


def _die_with_parent() -> None:
    """In the child: SIGTERM when the test process dies, however it dies (a killed or
    timed-out pytest never reaches its `finally`), so no server outlives its tests."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def census(owner: MemoryStore, ns: str | None = None) -> list[dict[str, Any]]:
    """Every node of the namespace and every grant that covers it: what a refused call may
    not change (grants on other namespaces are other tests', which may run meanwhile)."""
    ns = ns or owner.ns
    rows = owner.store.read(CENSUS, ns=ns)
    return [*rows, {"grants": [g for g in owner.grants() if covers(g["pattern"], ns)]}]


def settled(owner: MemoryStore, ns: str | None = None, limit_s: float = 60.0) -> None:
    """Wait until the server's buffered use records have landed: the census is unchanged
    over two flush periods. A fixed sleep was too short when the machine was loaded (the
    previous call's use record landed after the "before" census)."""
    deadline = time.monotonic() + limit_s
    seen = census(owner, ns)
    while time.monotonic() < deadline:
        time.sleep(2 * FLUSH_S)
        now = census(owner, ns)
        if now == seen:
            return
        seen = now
    raise AssertionError(f"the census of {ns or owner.ns} still changed after {limit_s} s")


class Server:
    """`memorepair mcp --http` on loopback, JWTs of `issuer_url` and the API keys of
    `principals_file` accepted."""

    def __init__(
        self,
        issuer_url: str,
        jwks_url: str,
        principals_file: Path,
        port: int,
        rate_per_minute: int = 600,
    ) -> None:
        self.port = port
        self.url = f"http://127.0.0.1:{port}/mcp"
        self.env = {
            **os.environ,
            "MEMOREPAIR_AUTH_ISSUER": issuer_url,
            "MEMOREPAIR_AUTH_JWKS_URL": jwks_url,
            "MEMOREPAIR_PRINCIPALS_FILE": str(principals_file),
            "MEMOREPAIR_USE_FLUSH_S": str(FLUSH_S),
            "MEMOREPAIR_HTTP_RATE_PER_MINUTE": str(rate_per_minute),
        }
        #: The server's stderr, in a file: a pipe nobody reads would fill and stop it.
        self.log = principals_file.parent / f"mcp-{port}.log"
        with self.log.open("wb") as log:
            self.proc = subprocess.Popen(
                [command(), "mcp", "--http", "--port", str(port)],
                cwd=ROOT,
                env=self.env,
                stdout=subprocess.DEVNULL,
                stderr=log,
                preexec_fn=_die_with_parent,
            )
        for _ in range(600):  # bounded: 60 s
            with socket.socket() as sock:
                if sock.connect_ex(("127.0.0.1", port)) == 0:
                    return
            if self.proc.poll() is not None:
                raise AssertionError(self.log.read_text())
            time.sleep(0.1)
        raise AssertionError("the MCP server did not listen within 60 s")

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=60)

    def post(self, token: str | None, body: Any) -> httpx.Response:
        headers = {"Accept": "application/json, text/event-stream"}
        if token is not None:
            headers["Authorization"] = f"Bearer {token}"
        return httpx.post(self.url, json=body, headers=headers, timeout=30)

    def session(self, token: str, work: Callable[[ClientSession], Awaitable[Any]]) -> Any:
        """Run `work` in one MCP session authenticated by `token`."""

        async def main() -> Any:
            client = httpx.AsyncClient(
                headers={"Authorization": f"Bearer {token}"},
                timeout=httpx.Timeout(60, read=300),
            )
            async with (
                client,
                streamable_http_client(self.url, http_client=client) as (read, write, _),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                return await work(session)

        return asyncio.run(main())

    def call(self, token: str, tool: str, /, **arguments: Any) -> CallToolResult:
        async def work(session: ClientSession) -> CallToolResult:
            return await session.call_tool(tool, arguments)

        result: CallToolResult = self.session(token, work)
        return result


def text_of(result: CallToolResult) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


def ok(result: CallToolResult) -> dict[str, Any]:
    assert not result.isError, text_of(result)
    data: dict[str, Any] = json.loads(text_of(result))
    return data


INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "0"},
    },
}


@contextmanager
def running(
    issuer_url: str, jwks_url: str, principals_file: Path, port: int, rate_per_minute: int = 600
) -> Iterator[Server]:
    server = Server(issuer_url, jwks_url, principals_file, port, rate_per_minute)
    try:
        yield server
    finally:
        server.stop()
