"""The HTTP limits per principal, as an ASGI middleware driven directly: a request rate
with bursts, and requests in flight; other principals are not affected."""

from __future__ import annotations

import json
from typing import Any

import anyio
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken

from memorepair.integrations.mcp import RateLimits


def _scope(name: str, method: str = "POST") -> dict[str, Any]:
    token = AccessToken(token="t", client_id=name, scopes=[])
    return {"type": "http", "method": method, "user": AuthenticatedUser(token)}


async def _call(app: Any, scope: dict[str, Any]) -> tuple[int, dict[str, str], bytes]:
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b""}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await app(scope, receive, send)
    start = sent[0]
    headers = {k.decode(): v.decode() for k, v in start.get("headers", [])}
    return start["status"], headers, b"".join(m.get("body", b"") for m in sent[1:])


async def _ok(scope: Any, receive: Any, send: Any) -> None:
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": b"{}"})


def test_rate_per_principal_with_bursts() -> None:
    now = [1000.0]
    app = RateLimits(_ok, per_minute=60, in_flight=100, clock=lambda: now[0])  # bursts of 10

    async def main() -> None:
        statuses = [(await _call(app, _scope("a")))[0] for _ in range(11)]
        assert statuses == [200] * 10 + [429]
        status, headers, body = await _call(app, _scope("a"))
        assert status == 429 and int(headers["retry-after"]) == 1
        error = json.loads(body)
        assert error["jsonrpc"] == "2.0" and "rate limit" in error["error"]["message"]
        assert (await _call(app, _scope("b")))[0] == 200  # another principal
        now[0] += 2.0  # two seconds later: two more (one a second)
        statuses = [(await _call(app, _scope("a")))[0] for _ in range(3)]
        assert statuses == [200, 200, 429]

    anyio.run(main)


def test_requests_in_flight_per_principal() -> None:
    release = anyio.Event()

    async def slow(scope: Any, receive: Any, send: Any) -> None:
        await release.wait()
        await _ok(scope, receive, send)

    app = RateLimits(slow, per_minute=6000, in_flight=2)

    async def main() -> None:
        results: list[int] = []

        async def one(name: str) -> None:
            results.append((await _call(app, _scope(name)))[0])

        async with anyio.create_task_group() as group:
            group.start_soon(one, "a")
            group.start_soon(one, "a")
            await anyio.sleep(0.05)
            assert (await _call(app, _scope("a")))[0] == 429  # a third one waits for nobody
            stream = await _call_nowait(app, _scope("a", "GET"))  # event streams not counted
            assert stream is None
            group.start_soon(one, "b")
            await anyio.sleep(0.05)
            release.set()
        assert sorted(results) == [200, 200, 200]

    anyio.run(main)


async def _call_nowait(app: Any, scope: dict[str, Any]) -> int | None:
    """Start a request and report a status only if it was refused at once."""
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b""}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    with anyio.move_on_after(0.05):
        await app(scope, receive, send)
    return sent[0]["status"] if sent and sent[0]["status"] == 429 else None
