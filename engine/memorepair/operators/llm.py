"""Optional ``regen`` through an OpenAI-compatible chat-completions endpoint (urllib only).

Registered only when ``MEMOREPAIR_LLM_BASE_URL`` is set (``OperatorConfig.llm``; then it
comes before the extractive ``regen``); the model, key and timeout come from the same
``LLMConfig``. The model gets only the usable support, numbered with the citation it
must use (``[uid@vN]``), and its answer goes through the same citation, support and
regression checks as extractive regen (minus the "text is a substring of the cited item"
check, since the model paraphrases). Output is not guaranteed deterministic; requests use
``temperature = 0``.

``transport`` is the seam: ``(url, payload, headers, timeout) -> response body``. The
default, ``HttpTransport``, holds the API key to the configured endpoint: a redirect is
refused (never followed, so the key goes nowhere else), ``timeout`` bounds the whole
request from connect to last byte (a watchdog shuts the socket at the deadline, so a
server that trickles its answer is cut off), a body over ``llm_max_response_bytes`` is
refused, and ``http://`` to a host other than loopback is refused unless
``llm_allow_insecure_http`` is set.
"""

from __future__ import annotations

import contextlib
import http.client
import ipaddress
import json
import socket
import ssl
import threading
import time
import urllib.parse
from collections.abc import Callable, Mapping
from typing import Any

from memorepair.errors import ConfigError
from memorepair.model import Artifact, Kind, Mode
from memorepair.settings import LLMConfig, OperatorConfig

from .base import RepairContext, Successor, Validation
from .common import CITATION, OperatorError, citation, normalise_ws
from .regen import check_cited_text, instruction_of, is_prompt_skill, prompt_header, skill_title

Transport = Callable[[str, Mapping[str, Any], Mapping[str, str], float], str]

SYSTEM_PROMPT = (
    "You repair an agent's memory. Rewrite the artifact using ONLY the sources given. "
    "Output plain lines, nothing else: one line per source, of the exact form "
    "'- <text> [uid@vN]', ending with that source's citation exactly as shown. "
    "Do not add facts that are not in the sources. Do not use code fences."
)


DEFAULT_MAX_RESPONSE_BYTES = 4_000_000


def is_loopback(host: str) -> bool:
    """`localhost` or a loopback address; names are not resolved (DNS could say anything)."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_endpoint(url: str, allow_insecure_http: bool = False) -> urllib.parse.SplitResult:
    """The parsed URL, if the key may be sent to it; `OperatorError` naming the fix if not."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise OperatorError(f"llm: {url!r} is not an http(s) URL")
    if parts.scheme == "http" and not allow_insecure_http and not is_loopback(parts.hostname):
        raise OperatorError(
            f"llm: refusing plain http to {parts.hostname} (the API key and the memory would "
            "cross the network unencrypted); use https, or set "
            "MEMOREPAIR_LLM_ALLOW_INSECURE_HTTP=true"
        )
    return parts


class HttpTransport:
    """POSTs JSON to one endpoint with a total deadline, a size cap and no redirects."""

    def __init__(
        self,
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
        allow_insecure_http: bool = False,
    ) -> None:
        self.max_response_bytes = max_response_bytes
        self.allow_insecure_http = allow_insecure_http

    def __call__(
        self, url: str, payload: Mapping[str, Any], headers: Mapping[str, str], timeout: float
    ) -> str:
        parts = check_endpoint(url, self.allow_insecure_http)
        conn = _connection(parts, timeout)
        deadline = time.monotonic() + timeout
        watchdog = threading.Timer(timeout, _shut, args=(conn,))
        watchdog.start()
        try:
            body = self._exchange(conn, parts, payload, headers, deadline)
        except (OSError, http.client.HTTPException) as exc:
            if time.monotonic() >= deadline:
                raise OperatorError(f"llm: no complete answer within {timeout:g}s") from exc
            raise OperatorError(f"llm: request to {parts.hostname} failed: {exc}") from exc
        finally:
            watchdog.cancel()
            conn.close()
        return body.decode("utf-8", errors="replace")

    def _exchange(
        self,
        conn: http.client.HTTPConnection,
        parts: urllib.parse.SplitResult,
        payload: Mapping[str, Any],
        headers: Mapping[str, str],
        deadline: float,
    ) -> bytes:
        path = parts.path or "/"
        if parts.query:
            path += "?" + parts.query
        conn.request("POST", path, body=json.dumps(payload).encode("utf-8"), headers=dict(headers))
        response = conn.getresponse()
        if 300 <= response.status < 400:
            raise OperatorError(
                f"llm: {parts.hostname} answered {response.status} redirecting to "
                f"{response.getheader('Location', '?')!r}; redirects are not followed (the API "
                "key would go along): set MEMOREPAIR_LLM_BASE_URL to the final address"
            )
        body = bytearray()
        while chunk := response.read1(65536):
            body += chunk
            if len(body) > self.max_response_bytes:
                raise OperatorError(
                    f"llm: response is larger than MEMOREPAIR_LLM_MAX_RESPONSE_BYTES="
                    f"{self.max_response_bytes}"
                )
            if time.monotonic() >= deadline:
                raise TimeoutError("deadline")
        if response.status >= 400:
            raise OperatorError(
                f"llm: {parts.hostname} answered {response.status}: "
                f"{bytes(body[:200]).decode('utf-8', 'replace')!r}"
            )
        return bytes(body)


def _connection(parts: urllib.parse.SplitResult, timeout: float) -> http.client.HTTPConnection:
    host, port = parts.hostname or "", parts.port
    if parts.scheme == "https":
        return http.client.HTTPSConnection(
            host, port, timeout=timeout, context=ssl.create_default_context()
        )
    return http.client.HTTPConnection(host, port, timeout=timeout)


def _shut(conn: http.client.HTTPConnection) -> None:
    """At the deadline: wake any blocked connect, send or read by shutting the socket."""
    sock = conn.sock
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)


#: The default transport (kept under its old name for callers that import it).
urllib_transport: Transport = HttpTransport()


def build_messages(ctx: RepairContext) -> list[dict[str, str]]:
    prompt_skill = is_prompt_skill(ctx.artifact)
    task = (
        f"Write the instructions of the prompt skill {skill_title(ctx.artifact)!r}: "
        "one imperative instruction per source."
        if prompt_skill
        else "Write a summary: one short factual sentence per source."
    )
    sources = "\n".join(
        f"{citation(s)} {instruction_of(s) if prompt_skill else normalise_ws(s.content)}"
        for s in ctx.support
    )
    return [
        {"role": "system", "content": SYSTEM_PROMPT},
        {"role": "user", "content": f"{task}\n\nSources:\n{sources}"},
    ]


def completion_text(body: str) -> str:
    """The first choice's message text of a chat-completions response."""
    try:
        text = json.loads(body)["choices"][0]["message"]["content"]
    except (ValueError, KeyError, IndexError, TypeError) as exc:
        raise OperatorError(f"llm: unexpected chat-completions response: {exc}") from exc
    if not isinstance(text, str):
        raise OperatorError("llm: response message content is not text")
    return text


def tidy(text: str) -> list[str]:
    """Model output lines without fences, blank lines or surrounding whitespace."""
    return [
        line.strip()
        for line in text.splitlines()
        if line.strip() and not line.strip().startswith("```")
    ]


class LLMRegenOperator:
    name = "llm"
    mode = Mode.REGEN

    def __init__(
        self,
        llm: LLMConfig,
        *,
        max_content_chars: int = OperatorConfig.max_content_chars,
        transport: Transport | None = None,
    ) -> None:
        if not llm.base_url:
            raise OperatorError("llm: a base URL is required (MEMOREPAIR_LLM_BASE_URL)")
        self._url = llm.base_url.rstrip("/") + "/chat/completions"
        self._model = llm.model
        self._api_key = llm.api_key
        self._timeout = llm.timeout_s
        self._limit = max_content_chars
        if transport is None:  # the default one refuses an unsafe endpoint: say so at once
            try:
                check_endpoint(self._url, llm.allow_insecure_http)
            except OperatorError as exc:  # a setting at fault: refuse at start, not per build
                raise ConfigError(str(exc)) from exc
            transport = HttpTransport(llm.max_response_bytes, llm.allow_insecure_http)
        self._transport = transport

    @property
    def transport(self) -> Transport:
        """What requests go through (the safe `HttpTransport` unless a test passed one)."""
        return self._transport

    def accepts(self, artifact: Artifact) -> bool:
        return artifact.kind is Kind.SUMMARY or is_prompt_skill(artifact)

    def request(self, ctx: RepairContext) -> tuple[dict[str, Any], dict[str, str]]:
        payload = {"model": self._model, "messages": build_messages(ctx), "temperature": 0}
        headers = {"Content-Type": "application/json"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        return payload, headers

    def build(self, ctx: RepairContext) -> Successor:
        if not ctx.support:
            raise OperatorError(f"{ctx.artifact.uid}: no retained support to regenerate from")
        payload, headers = self.request(ctx)
        lines = tidy(completion_text(self._transport(self._url, payload, headers, self._timeout)))
        if is_prompt_skill(ctx.artifact):
            header = prompt_header(skill_title(ctx.artifact))
            lines = [header] + [line for line in lines if line != header]
        cited = {m["uid"] for line in lines if (m := CITATION.search(line))}
        inputs = tuple(s.uid for s in ctx.support if s.uid in cited)
        return Successor(content="\n".join(lines), inputs=inputs, meta={"operator": "llm"})

    def validate(self, ctx: RepairContext, successor: Successor) -> Validation:
        prompt_skill = is_prompt_skill(ctx.artifact)
        return check_cited_text(
            ctx,
            successor,
            header=prompt_header(skill_title(ctx.artifact)) if prompt_skill else None,
            must_cite=[s for s in ctx.support if instruction_of(s)]
            if prompt_skill
            else ctx.support,
            extractive=False,
            limit=self._limit,
        )
