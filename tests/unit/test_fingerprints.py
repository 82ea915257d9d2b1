"""Fingerprints of erased text, and what execution and validation do with them."""

from __future__ import annotations

from operator_support import art, registry, sup

from memorepair.candidates import Candidate
from memorepair.execution import Attempt, successor_meta
from memorepair.fingerprints import Matcher, fingerprints, sha256_hex
from memorepair.model import Arch, EventType, Kind, Mode
from memorepair.operators.base import RepairContext, Successor
from memorepair.validation import judge

PASSPORT = "Ana's passport number is QX77121, valid until 2031."


def test_an_identifier_is_found_in_other_words_and_a_citation_is_not_an_identifier() -> None:
    erased = Matcher.of(fingerprints([PASSPORT, "- Ana travels in May. [trip@v1]"]))
    assert erased.hits("Quote the passport QX77121.")
    assert erased.hits({"note": ["seen", "qx77121"]})  # any JSON value, case-folded
    assert not erased.hits("Cite [trip@v1] for the dates.")  # a version's name is structure
    assert erased.found_in("QX77121") and not erased.found_in("QX77122")
    assert len(sha256_hex("x")) == 64


def test_without_keeps_what_a_replacement_still_says() -> None:
    old = "Ana's Zurich hotel budget is 1200 EUR per night for the whole of the stay."
    new = "Ana's Zurich hotel budget is 1500 EUR per night for the whole of the stay."
    erased = Matcher.of(fingerprints([old])).without([new])
    assert erased.hits(old)  # the phrases around 1200 are still erased text
    assert not erased.hits(new)  # the correction's own text is not


def _context(erased: Matcher | None, meta: dict[str, object]) -> RepairContext:
    skill = art(
        "skill-1",
        "# Skill: Book flights",
        kind=Kind.SKILL,
        arch=Arch.PROMPT,
        meta=meta,
        inputs=["passport", "pref"],
    )
    return RepairContext(
        event_type=EventType.DELETE,
        artifact=skill,
        support=(sup("pref", "Ana prefers aisle seats."),),
        invalidated=(art("passport", PASSPORT),),
        erased=erased,
    )


def test_successor_meta_drops_what_carries_the_erased_text() -> None:
    meta = {"title": "Book flights", "instruction": "Quote the passport QX77121."}
    successor = Successor(content="x", inputs=("pref",))
    erased = Matcher.of(fingerprints([PASSPORT]))
    assert successor_meta(_context(erased, meta), successor) == {"title": "Book flights"}
    # without the fingerprints only a shared phrase counts: other words slip through
    assert successor_meta(_context(None, meta), successor) == meta


def test_validation_fails_a_successor_that_carries_a_fingerprint_and_names_the_field() -> None:
    erased = Matcher.of(fingerprints([PASSPORT]))
    ctx = _context(erased, {"title": "Book flights"})
    operators = registry()
    built = operators.named("regen")
    assert built is not None
    successor = built.build(ctx)
    candidate = Candidate(
        "skill-1", "t/skill-1@1", Mode.REGEN, "regen", True, "", 5.0, 4.0, requires=()
    )
    good = judge(operators, Attempt(candidate, "t/skill-1@2", successor, ctx))
    assert good.validated, good.detail
    leaky = Successor(successor.content, successor.inputs, meta={"memo": "id QX77121"})
    bad = judge(operators, Attempt(candidate, "t/skill-1@2", leaky, ctx))
    assert bad.validated is False
    assert bad.detail.startswith("erasure: meta 'memo' carries the erased text")
    assert "qx77121" not in bad.detail.lower()
