"""Search's pure parts: filters, Lucene query text, widening and rank fusion."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memorepair.errors import InputError
from memorepair.serving.search import (
    MAX_FETCH,
    MAX_TERMS,
    TEXT_WEIGHT,
    Filters,
    filters,
    first_fetch,
    first_text_fetch,
    fuse,
    lucene_filter,
    lucene_text,
    normalised,
    widen,
)


def test_filters_are_validated_and_normalised() -> None:
    f = filters(
        "team-a",
        kinds=["summary", "record", "summary"],
        meta={"topic": "travel", "n": 3},
        since="2026-01-02T03:04:05",
        until=None,
        searchable=["topic", "n"],
    )
    assert f.kinds == ("record", "summary")
    assert f.meta == ("n=3", "topic=travel")
    assert f.since == datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    assert f.narrowed and not Filters("team-a").narrowed
    with pytest.raises(InputError, match="unknown kinds"):
        filters("x", kinds=["note"], meta=None, since=None, until=None, searchable=[])
    with pytest.raises(InputError, match="MEMOREPAIR_SEARCH_META_FIELDS"):
        filters("x", kinds=None, meta={"topic": "a"}, since=None, until=None, searchable=[])
    with pytest.raises(InputError, match="ISO 8601"):
        filters("x", kinds=None, meta=None, since="yesterday", until=None, searchable=[])
    with pytest.raises(InputError, match="string, number or boolean"):
        filters("x", kinds=None, meta={"t": [1]}, since=None, until=None, searchable=["t"])


def test_lucene_text_escapes_values_and_never_reads_operators() -> None:
    f = Filters("ns.1", ("summary",), ('say="hi" \\ there',))
    query = lucene_text('Who said AND "NOT" (x) || y*?', f)
    assert query == (
        "+(content:(who said and not x y) meta_terms:(who said and not x y)) "
        '+ns:"ns.1"^0 +kind:("summary")^0 +meta_terms:"say=\\"hi\\" \\\\ there"^0'
    )
    assert lucene_text("?? !! --", f) is None
    long = " ".join(f"w{i}" for i in range(200))
    text = lucene_text(long, Filters("n"))
    assert text is not None and text.count("w") == 2 * MAX_TERMS
    assert lucene_filter(Filters("n")) == '+ns:"n"^0'


def test_widening_reaches_k_at_the_observed_rate_and_is_bounded() -> None:
    assert first_fetch(10) == 100 and first_fetch(1) == 100 and first_fetch(5000) == MAX_FETCH
    assert first_fetch(50) == 100 and first_fetch(100) == 200  # unfiltered: the index's own
    assert first_fetch(10, narrowed=True) == 100 and first_fetch(20, narrowed=True) == 200
    # MEMOREPAIR_SEARCH_VECTOR_FETCH sets the least first fetch; k and filters still widen it
    assert first_fetch(10, least=30) == 30 and first_fetch(50, least=30) == 100
    assert first_fetch(10, narrowed=True, least=30) == 100
    assert first_text_fetch(10) == 12 and first_text_fetch(1) == 2  # Lucene is exact
    assert first_text_fetch(5000) == MAX_FETCH
    assert widen(10, 40, 4) == 160  # four times at least
    assert widen(10, 100, 0) == 1515  # nothing passed: k / (1/101) with a 1.5 margin
    assert widen(10, 1000, 0) == MAX_FETCH
    fetch, rounds = first_fetch(10), 1
    while fetch < MAX_FETCH:  # widening always terminates at the cap
        fetch, rounds = widen(10, fetch, 0), rounds + 1
    assert rounds <= 3


def _row(uid: str, score: float) -> dict[str, object]:
    return {"uid": uid, "version": 1, "kind": "record", "content": uid, "score": score}


def test_scores_are_normalised_within_their_own_list() -> None:
    assert normalised("text", [_row("a", 8.0), _row("b", 2.0)]) == [1.0, 0.25]
    assert normalised("vector", [_row("a", 0.9), _row("b", 0.8), _row("c", 0.7)]) == (
        pytest.approx([1.0, 0.5, 0.0])
    )
    assert normalised("vector", [_row("a", 0.9), _row("b", 0.9)]) == [1.0, 1.0]
    assert normalised("text", []) == []


def test_fusion_is_convex_over_normalised_scores_with_per_mode_ranks() -> None:
    vector = [_row("a", 0.95), _row("b", 0.90), _row("c", 0.85)]
    text = [_row("b", 10.0), _row("d", 5.0)]
    hits = fuse({"vector": vector, "text": text}, 4)
    w = TEXT_WEIGHT
    expected = {"b": w + (1 - w) * 0.5, "a": 1 - w, "d": w * 0.5, "c": 0.0}
    assert [h.uid for h in hits] == sorted(expected, key=lambda u: -expected[u])
    assert {h.uid: h.score for h in hits} == pytest.approx(expected)
    b = next(h for h in hits if h.uid == "b")
    assert b.ranks == {"vector": 2, "text": 1}
    assert next(h for h in hits if h.uid == "d").ranks == {"vector": None, "text": 2}
    assert fuse({"vector": [], "text": []}, 5) == []


def test_a_strong_text_hit_beats_a_vector_only_hit() -> None:
    """What rank fusion got wrong: the text ranking's clear best, ranked low by a weak
    vector ranking, must not fall below the vector ranking's best alone."""
    vector = [_row("v", 0.80)] + [_row(f"n{i}", 0.79 - i / 1000) for i in range(8)]
    vector.append(_row("t", 0.70))
    text = [_row("t", 12.0), _row("n0", 1.0)]
    assert fuse({"vector": vector, "text": text}, 1)[0].uid == "t"
