"""``regen`` for summaries and prompt skills: deterministic extractive text from support.

Formats (one line each, ``\\n``-separated, no trailing newline):

- summary: ``- <first sentence of the item, <= 200 chars> [uid@vN]`` per support item;
- prompt skill: ``# Skill: <title>`` then ``- <instruction> [uid@vN]`` per support item
  that carries an instruction (``meta["instruction"]``, else its first sentence).

Memory builders call ``summarize`` / ``distill_prompt`` to create the first versions, so a
repaired artifact differs from its predecessor only where the support differs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from memorepair.errors import some
from memorepair.model import Arch, Artifact, Kind, Mode
from memorepair.settings import OperatorConfig

from .base import RepairContext, Successor, Support, Validation
from .common import (
    CITATION,
    OperatorError,
    Taint,
    citation,
    first_sentence,
    normalise_ws,
    unknown_inputs,
)

SENTENCE_LIMIT = 200


def summary_line(item: Support) -> str:
    text = first_sentence(item.content, SENTENCE_LIMIT)
    return f"- {text} {citation(item)}" if text else f"- {citation(item)}"


def instruction_of(item: Support) -> str:
    raw = item.meta.get("instruction")
    if isinstance(raw, str) and raw.strip():
        return normalise_ws(raw)[:SENTENCE_LIMIT].rstrip()
    return first_sentence(item.content, SENTENCE_LIMIT)


def summarize(support: Sequence[Support]) -> str:
    return "\n".join(summary_line(s) for s in support)


def prompt_header(title: str) -> str:
    return f"# Skill: {normalise_ws(title)}"


def distill_prompt(support: Sequence[Support], title: str) -> str:
    lines = [prompt_header(title)]
    lines += [f"- {text} {citation(s)}" for s in support if (text := instruction_of(s))]
    return "\n".join(lines)


def skill_title(artifact: Artifact) -> str:
    title = artifact.meta.get("title")
    return title if isinstance(title, str) and title.strip() else artifact.uid


def is_prompt_skill(artifact: Artifact) -> bool:
    return artifact.kind is Kind.SKILL and artifact.arch is Arch.PROMPT


@dataclass(frozen=True)
class CitedLine:
    text: str
    uid: str
    version: int


def parse_cited_line(line: str) -> CitedLine | None:
    """``- text [uid@vN]`` (text may be empty) or None when the line has another form."""
    if not line.startswith("- "):
        return None
    match = CITATION.search(line)
    if match is None:
        return None
    text = line[2 : match.start()]
    if text and not text.endswith(" "):
        return None
    return CitedLine(text.strip(), match["uid"], int(match["version"]))


def check_cited_text(
    ctx: RepairContext,
    successor: Successor,
    *,
    header: str | None,
    must_cite: Sequence[Support],
    extractive: bool,
    limit: int,
) -> Validation:
    """Schema, support and regression checks shared by extractive and LLM regen."""
    problem = _shape_problem(ctx, successor, header, limit)
    if problem:
        return Validation(False, problem)
    lines = successor.content.split("\n")
    first = 1 if header is None else 2
    by_uid = {s.uid: s for s in ctx.support}
    taint = Taint(ctx)
    cited: set[str] = set()
    for number, line in enumerate(lines[first - 1 :], start=first):
        parsed = parse_cited_line(line)
        if parsed is None:
            return Validation(False, f"schema: line {number} is not '- text [uid@vN]': {line!r}")
        problem = _line_problem(number, parsed, by_uid.get(parsed.uid), taint, extractive)
        if problem:
            return Validation(False, problem)
        cited.add(parsed.uid)
    unlisted = sorted(cited - set(successor.inputs))
    if unlisted:
        return Validation(
            False, f"provenance: cites {some(unlisted, 'uid')} but does not list them as inputs"
        )
    dropped = [s.uid for s in must_cite if s.uid not in cited]
    if dropped:
        return Validation(
            False, f"regression: retained support {some(dropped, 'item')} is no longer cited"
        )
    return Validation(True)


def _shape_problem(
    ctx: RepairContext, successor: Successor, header: str | None, limit: int
) -> str | None:
    content = successor.content
    if not content.strip():
        return "schema: successor is empty"
    if len(content) > limit:
        return f"schema: {len(content)} characters > max_content_chars {limit}"
    stray = unknown_inputs(ctx, successor.inputs)
    if stray:
        return f"support: {some(stray, 'input')} not usable support"
    first = content.split("\n", 1)[0]
    if header is not None and first != header:
        return f"schema: first line should be {header!r}, got {first!r}"
    return None


def _line_problem(
    number: int, parsed: CitedLine, item: Support | None, taint: Taint, extractive: bool
) -> str | None:
    """Why one cited line may not stand (None: it may)."""
    if item is None:
        return f"support: line {number} cites {parsed.uid!r}, which is not usable support"
    if item.version != parsed.version:
        return (
            f"support: line {number} cites {parsed.uid}@v{parsed.version}, "
            f"support has v{item.version}"
        )
    grounded = parsed.text == instruction_of(item) or parsed.text in normalise_ws(item.content)
    if extractive and not grounded:
        return f"support: line {number} text does not come from {parsed.uid!r}"
    # A grounded line is a verbatim part of its support item and draws on nothing else
    # (word n-grams would misjudge a sentence cut mid-word at the length limit).
    phrase = None if grounded else taint.phrase(parsed.text)
    if phrase:
        return f"support: line {number} draws on invalidated text {phrase}"
    return None


class RegenOperator:
    """Extractive regeneration of summaries and prompt skills from retained support."""

    name = "regen"
    mode = Mode.REGEN

    def __init__(self, config: OperatorConfig | None = None) -> None:
        self._limit = (config or OperatorConfig()).max_content_chars

    def accepts(self, artifact: Artifact) -> bool:
        return artifact.kind is Kind.SUMMARY or is_prompt_skill(artifact)

    def build(self, ctx: RepairContext) -> Successor:
        if not ctx.support:
            raise OperatorError(f"{ctx.artifact.uid}: no retained support to regenerate from")
        if is_prompt_skill(ctx.artifact):
            content = distill_prompt(ctx.support, skill_title(ctx.artifact))
            used = tuple(s.uid for s in ctx.support if instruction_of(s))
        else:
            content = summarize(ctx.support)
            used = tuple(s.uid for s in ctx.support)
        return Successor(content=content, inputs=used)

    def validate(self, ctx: RepairContext, successor: Successor) -> Validation:
        if is_prompt_skill(ctx.artifact):
            return check_cited_text(
                ctx,
                successor,
                header=prompt_header(skill_title(ctx.artifact)),
                must_cite=[s for s in ctx.support if instruction_of(s)],
                extractive=True,
                limit=self._limit,
            )
        return check_cited_text(
            ctx, successor, header=None, must_cite=ctx.support, extractive=True, limit=self._limit
        )
