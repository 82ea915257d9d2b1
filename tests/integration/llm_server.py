"""A real OpenAI-compatible chat-completions server on 127.0.0.1, for the LLM operator's
tests: it answers each request with one cited line per source, as a model would.

Not a mock of the client: the engine's own HTTP transport talks to it over a socket.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

SOURCE = re.compile(r"^(\[[^\]]+@v\d+\]) (.*)$")


@dataclass
class Received:
    """What the server saw: one entry per request (path, headers, JSON body)."""

    requests: list[dict[str, Any]] = field(default_factory=list)


def answer(body: dict[str, Any]) -> str:
    """'- Reworded: <source text> [uid@vN]' for every source line of the user message."""
    prompt = body["messages"][-1]["content"]
    lines = []
    for line in prompt.split("Sources:\n", 1)[-1].splitlines():
        match = SOURCE.match(line)
        if match:
            lines.append(f"- Reworded: {match[2]} {match[1]}")
    return "\n".join(lines)


@contextmanager
def chat_server() -> Iterator[tuple[str, Received]]:
    """Serve on an ephemeral port; yields the base URL (`.../v1`) and what was received."""
    received = Received()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            body = json.loads(self.rfile.read(length))
            received.requests.append(
                {"path": self.path, "headers": dict(self.headers), "body": body}
            )
            reply = {"choices": [{"message": {"role": "assistant", "content": answer(body)}}]}
            data = json.dumps(reply).encode("utf-8")
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            """Quiet: the test reads `received` instead."""

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1", received
    finally:
        server.shutdown()
        server.server_close()
