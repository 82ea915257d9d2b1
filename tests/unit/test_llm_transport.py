"""The LLM transport against real HTTP servers on 127.0.0.1: the key never follows a
redirect, one deadline bounds the whole request, the body is capped, and plain http to
a host other than loopback is refused.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from memorepair.errors import ConfigError
from memorepair.operators.common import OperatorError
from memorepair.operators.llm import HttpTransport, LLMRegenOperator, check_endpoint
from memorepair.settings import LLMConfig, OperatorConfig, load_settings

KEY = "sk-test-never-leaves"
COMPLETION = {"choices": [{"message": {"content": "- a fact [r1@v1]"}}]}
Reply = Callable[[BaseHTTPRequestHandler], None]


class Server:
    """A real HTTP server in a thread that records each request's path and headers."""

    def __init__(self, reply: Reply) -> None:
        self.requests: list[dict[str, Any]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                body = self.rfile.read(length)
                outer.requests.append(
                    {"path": self.path, "headers": dict(self.headers), "body": body}
                )
                reply(self)

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)


@contextmanager
def serving(reply: Reply) -> Iterator[Server]:
    server = Server(reply)
    server.thread.start()
    try:
        yield server
    finally:
        server.httpd.shutdown()
        server.httpd.server_close()


def answer(body: bytes, status: int = 200, **headers: str) -> Reply:
    def reply(handler: BaseHTTPRequestHandler) -> None:
        handler.send_response(status)
        for name, value in headers.items():
            handler.send_header(name.replace("_", "-"), value)
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        handler.wfile.write(body)

    return reply


def trickle(handler: BaseHTTPRequestHandler) -> None:
    """Headers for a 1 GB body, then one byte every 0.1 s (for at most 30 s)."""
    handler.send_response(200)
    handler.send_header("Content-Length", str(1 << 30))
    handler.end_headers()
    try:
        for _ in range(300):
            handler.wfile.write(b" ")
            handler.wfile.flush()
            time.sleep(0.1)
    except OSError:
        pass  # the client hung up: what we want


def post(url: str, transport: HttpTransport, timeout: float = 5.0) -> str:
    headers = {"Content-Type": "application/json", "Authorization": f"Bearer {KEY}"}
    return transport(url + "/v1/chat/completions", {"model": "m"}, headers, timeout)


def test_a_completion_round_trip() -> None:
    with serving(answer(json.dumps(COMPLETION).encode())) as server:
        body = post(server.url, HttpTransport())
    assert json.loads(body) == COMPLETION
    (request,) = server.requests
    assert request["path"] == "/v1/chat/completions"
    assert request["headers"]["Authorization"] == f"Bearer {KEY}"
    assert json.loads(request["body"]) == {"model": "m"}


@pytest.mark.parametrize("status", [301, 302, 307, 308])
def test_a_redirect_never_carries_the_key(status: int) -> None:
    with serving(answer(json.dumps(COMPLETION).encode())) as elsewhere:
        target = elsewhere.url + "/steal"
        with (
            serving(answer(b"", status, Location=target)) as first,
            pytest.raises(OperatorError, match="redirects are not followed"),
        ):
            post(first.url, HttpTransport())
        assert len(first.requests) == 1
    assert elsewhere.requests == []  # the other origin saw nothing, let alone the key


def test_one_deadline_bounds_a_trickled_body() -> None:
    timeout = 1.0
    outcome: dict[str, BaseException] = {}

    def run() -> None:
        try:
            post(server.url, HttpTransport(), timeout)
        except BaseException as exc:
            outcome["error"] = exc

    with serving(trickle) as server:
        thread = threading.Thread(target=run, daemon=True)
        thread.start()
        thread.join(timeout + 1.0)
        assert not thread.is_alive(), "the request outlived its deadline"
    assert isinstance(outcome["error"], OperatorError)
    assert "no complete answer within 1s" in str(outcome["error"])


def test_a_response_over_the_cap_is_refused() -> None:
    with serving(answer(b"x" * 200_000)) as server:
        with pytest.raises(OperatorError, match="larger than MEMOREPAIR_LLM_MAX_RESPONSE_BYTES"):
            post(server.url, HttpTransport(max_response_bytes=100_000))
        assert len(post(server.url, HttpTransport(max_response_bytes=200_000))) == 200_000


def test_an_error_status_is_reported_briefly() -> None:
    with (
        serving(answer(b"quota exceeded" * 1000, 429)) as server,
        pytest.raises(OperatorError, match="answered 429") as caught,
    ):
        post(server.url, HttpTransport())
    assert len(str(caught.value)) < 400


def test_plain_http_only_to_loopback_unless_allowed() -> None:
    for url in (
        "http://127.0.0.1:9/v1",
        "http://localhost/v1",
        "http://[::1]:8/v1",
        "https://a.example/v1",
    ):
        check_endpoint(url)
    for url in ("http://llm.example.com/v1", "http://10.1.2.3/v1", "http://127.0.0.1.nip.io/v1"):
        with pytest.raises(OperatorError, match="refusing plain http"):
            check_endpoint(url)
        check_endpoint(url, allow_insecure_http=True)
    with pytest.raises(ConfigError, match="refusing plain http"):
        LLMRegenOperator(LLMConfig("http://llm.example.com/v1", "m", KEY, 5.0))
    with pytest.raises(OperatorError, match="not an http"):
        check_endpoint("file:///etc/passwd")
    allowed = LLMRegenOperator(
        LLMConfig("http://llm.example.com/v1", "m", KEY, 5.0, allow_insecure_http=True)
    )
    assert allowed.name == "llm"


def test_the_settings_reach_the_transport(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMOREPAIR_LLM_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("MEMOREPAIR_LLM_MAX_RESPONSE_BYTES", "1234")
    monkeypatch.setenv("MEMOREPAIR_LLM_TIMEOUT_S", "7")
    llm = OperatorConfig.from_settings(load_settings()).llm
    assert llm is not None
    assert (llm.max_response_bytes, llm.timeout_s, llm.allow_insecure_http) == (1234, 7.0, False)
    operator = LLMRegenOperator(llm)
    transport = operator.transport
    assert isinstance(transport, HttpTransport) and transport.max_response_bytes == 1234
