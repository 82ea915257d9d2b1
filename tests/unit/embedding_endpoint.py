"""A tiny OpenAI-compatible `/v1/embeddings` on 127.0.0.1 for the tests: deterministic
vectors (a text of n characters gets `[n, n+1, ...]`), answers in reverse order (the
client must put them back by index), and three ways to fail: a malformed answer
(`broken`), 503 while `down`, and 503 for a batch holding a text that contains `poison`
(a model that fails on some input)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar


class Endpoint(BaseHTTPRequestHandler):
    requests: ClassVar[list[dict[str, Any]]] = []
    headers_seen: ClassVar[list[str | None]] = []
    dimension: ClassVar[int] = 8
    broken: ClassVar[bool] = False
    down: ClassVar[bool] = False
    poison: ClassVar[str | None] = None

    @classmethod
    def reset(cls) -> None:
        cls.requests, cls.headers_seen = [], []
        cls.dimension, cls.broken, cls.down, cls.poison = 8, False, False, None

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        cls = type(self)
        cls.requests.append({"path": self.path, **body})
        cls.headers_seen.append(self.headers.get("Authorization"))
        if cls.down or (cls.poison and any(cls.poison in t for t in body["input"])):
            self.send_error(503, "down for the test")
            return
        data = [
            {"index": i, "embedding": [float(len(t) + d) for d in range(cls.dimension)]}
            for i, t in enumerate(body["input"])
        ]
        answer: dict[str, Any] = {"data": list(reversed(data))} if not cls.broken else {"x": 1}
        raw = json.dumps(answer).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def log_message(self, *args: Any) -> None:
        pass


@contextmanager
def serving() -> Iterator[str]:
    """The endpoint's base URL (ending in /v1), reset, for the block."""
    Endpoint.reset()
    server = ThreadingHTTPServer(("127.0.0.1", 0), Endpoint)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()
