"""Optional ``regen`` through an OpenAI-compatible chat-completions endpoint (urllib only).

Registered only when ``MEMOREPAIR_LLM_BASE_URL`` is set (``OperatorConfig.llm``; then it
comes before the extractive ``regen``); the model, key and timeout come from the same
``LLMConfig``. The model gets only the usable support, numbered with the citation it
must use (``[uid@vN]``), and its answer goes through the same citation, support and
regression checks as extractive regen (minus the "text is a substring of the cited item"
check, since the model paraphrases). Output is not guaranteed deterministic; requests use
``temperature = 0``.

``transport`` is the seam: ``(url, payload, headers, timeout) -> response body``; tests
pass a canned response and no network is touched.
"""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Callable, Mapping
from typing import Any

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


def urllib_transport(
    url: str, payload: Mapping[str, Any], headers: Mapping[str, str], timeout: float
) -> str:
    request = urllib.request.Request(
        url, data=json.dumps(payload).encode("utf-8"), headers=dict(headers), method="POST"
    )
    with urllib.request.urlopen(request, timeout=timeout) as response:
        body: bytes = response.read()
    return body.decode("utf-8")


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
        self._transport = transport or urllib_transport

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
