"""What a redacted version keeps (no database): the rules the erasure step and a late
write share."""

from __future__ import annotations

import json

from memorepair.fingerprints import Matcher, fingerprints, sha256_hex
from memorepair.redaction import Erasing, erased_text, redacted

SECRET = "Passport QX77121 was issued to Mara Lind in Tromso on the third of March"


def row(head: bool = True) -> dict[str, object]:
    return {
        "vid": "ns/late@1",
        "head": head,
        "content": f"- {SECRET}",
        "meta": json.dumps({"desk": "front office", "copied": SECRET}),
        "recipe": json.dumps({"op": "summary", "note": "QX77121"}),
    }


def test_a_head_keeps_the_meta_and_recipe_parts_without_a_fingerprint() -> None:
    marker = redacted(row(), Matcher.of(fingerprints([SECRET])))
    assert json.loads(marker["meta"]) == {"desk": "front office"}
    assert marker["recipe"] is None  # it quotes the identifier
    assert marker["sha256"] == sha256_hex(erased_text(row())) and len(marker["sha256"]) == 64


def test_with_no_fingerprints_yet_nothing_but_the_hash_is_kept() -> None:
    marker = redacted(row(), None)
    assert marker["meta"] is None and marker["recipe"] is None


def test_a_version_that_is_not_a_head_keeps_nothing() -> None:
    marker = redacted(row(head=False), Matcher.of(fingerprints([SECRET])))
    assert marker["meta"] is None and marker["recipe"] is None


def test_a_clean_recipe_is_kept_for_a_later_retry() -> None:
    clean = {**row(), "recipe": json.dumps({"op": "summary"})}
    assert redacted(clean, Matcher.of(fingerprints([SECRET])))["recipe"] == clean["recipe"]


def test_the_answer_names_the_input_and_the_event_id() -> None:
    cause = Erasing("passport@1", "ns/gdpr-1")
    answer = cause.as_dict()
    assert answer["input"] == "passport@1" and answer["event"] == "gdpr-1"
    assert "passport@1 is erased by event 'gdpr-1'" in answer["reason"]
