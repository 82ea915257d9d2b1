"""SPEC §6, validation: Validate_i(z_i) on every successor, before anything is published.

Each candidate's own operator checks its successor (replay consistency for recompute,
schema and regression checks for regen, sandboxed behaviour for chain skills,
forget/retain behaviour for param), and the successor's meta like its content. A plugin
that raises fails its candidate only. Execution judges each successor as it builds it and
stages it with its verdict (`judge`, handed to it by the repair), so a resumed run keeps
the verdicts a crashed one recorded; `validate` checks whatever is left without one.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import replace

from memorepair import queries
from memorepair.codec import canonical_json
from memorepair.execution import Attempt
from memorepair.model import Progress
from memorepair.operators.base import RepairContext, Successor, Validation
from memorepair.operators.common import Taint
from memorepair.operators.registry import OperatorRegistry
from memorepair.operators.sandbox import cpu_clock
from memorepair.store import Store, WriteBehind

RECORD_VALIDATION = queries.named("validation/record_validation")


def judge(registry: OperatorRegistry, attempt: Attempt) -> Attempt:
    """One successor with its verdict, written nowhere: execution stages it with the
    verdict, and a plan judges its in-memory successors with exactly the same checks."""
    if attempt.successor is None or attempt.validated is not None:
        return attempt
    cpu_started, started = cpu_clock(), time.perf_counter()  # wall inside: execution._build
    verdict = _verdict(registry, attempt)
    work_s = (attempt.work_s or 0.0) + time.perf_counter() - started  # build + validation
    cpu_s = (attempt.cpu_s or 0.0) + cpu_clock() - cpu_started
    return replace(attempt, validated=verdict.ok, detail=verdict.reason, work_s=work_s, cpu_s=cpu_s)


def validate(
    store: Store, registry: OperatorRegistry, attempts: Sequence[Attempt], *, progress: Progress
) -> list[Attempt]:
    """Every attempt with its verdict, in the same (topological) order.

    Execution judges what it stages (`judge`); this records verdicts only for attempts
    staged without one (by a version of the engine that validated afterwards).
    """
    checked: list[Attempt] = []
    with WriteBehind(store, RECORD_VALIDATION) as writer:
        for done, attempt in enumerate(attempts, start=1):
            if attempt.successor is None or attempt.validated is not None:
                checked.append(attempt)  # nothing staged, or judged during execution
            else:
                judged = judge(registry, attempt)
                checked.append(judged)
                writer.add(
                    {
                        "vid": judged.vid,
                        "validated": judged.validated,
                        "validation": judged.detail or None,
                    }
                )
            progress("validate", done, len(attempts))
    return checked


def _verdict(registry: OperatorRegistry, attempt: Attempt) -> Validation:
    name = attempt.candidate.operator
    operator = registry.named(name) if name else None
    if operator is None or attempt.context is None or attempt.successor is None:
        return Validation(False, f"no {attempt.candidate.mode.value} operator")
    try:
        verdict = operator.validate(attempt.context, attempt.successor)
    except Exception as exc:  # a plugin's crash is a failed validation, not ours
        return Validation(False, f"validation raised {type(exc).__name__}: {exc}")
    if not verdict.ok:
        return verdict
    return _erasure_verdict(attempt.context, attempt.successor) or _meta_verdict(attempt)


def _meta_verdict(attempt: Attempt) -> Validation:
    """Meta is checked as content is: it may not draw on invalidated support."""
    assert attempt.context is not None and attempt.successor is not None
    meta = attempt.successor.meta
    if not meta or not attempt.context.invalidated:
        return Validation(True)
    phrase = Taint(attempt.context).phrase(canonical_json(dict(meta)))
    if phrase:
        return Validation(False, f"support: meta draws on invalidated text {phrase}")
    return Validation(True)


def _erasure_verdict(ctx: RepairContext, successor: Successor) -> Validation | None:
    """An erasing event's successor may carry no fingerprint of the erased text, in its
    content, meta or recipe, whatever its operator says: it would serve what the event
    erases. The verdict names the field, never the text (it is stored and shown)."""
    erased = ctx.erased
    if erased is None or not erased:
        return None
    recipe = successor.recipe.model_dump() if successor.recipe else None
    fields: list[tuple[str, object]] = [("content", successor.content), ("recipe", recipe)]
    fields += [(f"meta {key!r}", [key, value]) for key, value in sorted(successor.meta.items())]
    carrying = [name for name, value in fields if value is not None and erased.hits(value)]
    if not carrying:
        return None
    return Validation(
        False,
        f"erasure: {', '.join(carrying)} carries the erased text (a fingerprint of what "
        "this event erases); the successor stays withdrawn",
    )
