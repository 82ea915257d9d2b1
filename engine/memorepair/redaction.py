"""Redaction: what an erased version becomes, and the late writes that derive from one.

An erasing event (`erasure.py`) redacts every version that holds its erased text or was
derived from it. A writer that read such a version earlier (an agent holding `uid@N`) may
record after the event's barrier, while its erasure runs, or after it completed: its new
artifact is stale and recorded withdrawn (`recording.py`), and its content is likely a
copy of what it read. Such a write is redacted in its own transaction, exactly as the
event redacts its cascade (text gone, SHA-256 of what was submitted kept, `erased_by`
naming the event), or refused with `on_stale="refuse"`, naming the erased input.

A write is redacted when it is not served and one of its input versions is erased
(`erased_by`), or descends over INFLUENCES from a pre-event version of the roots of an
erasing event still open: the set the event's erasure reaches (`erasure/erasable_versions`).
The writer locks its input versions before it reads them, and the erasure sets
`erased_by` on them under the same locks and reads its reach again after each pass
until none of it is left unredacted, so a write either commits before that read (and is
redacted by the event) or sees `erased_by` (and redacts itself).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, MutableMapping, Sequence
from dataclasses import dataclass
from typing import Any

from memorepair import queries
from memorepair.codec import canonical_json, stored_json
from memorepair.errors import InputError
from memorepair.fingerprints import Matcher, sha256_hex
from memorepair.store import Tx

OPEN_ERASURES = queries.named("redaction/open_erasures")
ERASED_INPUTS = queries.named("redaction/erased_inputs")
EVENT_PRINTS = queries.named("redaction/event_prints")
MARK_REDACTED = queries.named("redaction/mark_redacted")


def erased_text(row: Mapping[str, Any]) -> str:
    """What an erasure record hashes of a version: its content, meta and recipe."""
    return canonical_json([row.get("content"), row.get("meta"), row.get("recipe")])


def redacted(row: Mapping[str, Any], matcher: Matcher | None) -> dict[str, Any]:
    """A version's redaction: text gone, hash kept. A withdrawn current version (`head`)
    keeps the meta and recipe parts that do not quote the erased text, for a later retry;
    with no fingerprints to judge by yet (`matcher` None), it keeps none of them."""
    if matcher is None or not row["head"]:
        kept: dict[str, Any] = {}
        recipe = None
    else:
        kept = {k: v for k, v in _json(row["meta"]).items() if not matcher.hits([k, v])}
        recipe = None if matcher.hits(row["recipe"] or "") else row["recipe"]
    return {
        "vid": row["vid"],
        "sha256": sha256_hex(erased_text(row)),
        "meta": stored_json(kept),
        "recipe": recipe,
    }


@dataclass(frozen=True)
class Erasing:
    """An input a write derives from that an erasure erased, or is erasing: the write's
    answer names both."""

    input: str  # the input version, `uid@N`
    event: str  # the erasing event's key, `ns/id`

    @property
    def event_id(self) -> str:
        return self.event.split("/", 1)[1]

    def as_dict(self) -> dict[str, str]:
        return {"input": self.input, "event": self.event_id, "reason": self.reason}

    @property
    def reason(self) -> str:
        return (
            f"input {self.input} is erased by event {self.event_id!r}: the content was not "
            "stored, nor any meta or recipe that may quote it (a SHA-256 of what was sent is "
            "kept); the artifact is withdrawn"
        )


def redact_late(
    tx: Tx,
    ns: str,
    rows: Sequence[MutableMapping[str, Any]],
    refuse: bool,
    earlier: Mapping[str, Erasing] | None = None,
) -> dict[str, Erasing]:
    """Redact, in place, the rows (new versions about to be written, input-first) that
    derive from erased or erasing versions; returns them by uid. `refuse`: raise instead,
    naming the erased input and the event, with nothing written. `earlier`: the rows of
    the same transaction's earlier statements redacted so far (they pass it on too)."""
    late = [r for r in rows if not r["live"]]
    if not late:
        return {}
    in_batch = _causes(late, _erasing_inputs(tx, ns, late), dict(earlier or {}), refuse)
    if in_batch:
        _apply(tx, [r for r in late if r["uid"] in in_batch], in_batch)
    return in_batch


def _causes(
    late: Sequence[Mapping[str, Any]],
    found: Mapping[str, Erasing],
    passed: dict[str, Erasing],
    refuse: bool,
) -> dict[str, Erasing]:
    """Which late rows are redacted, and for what: an erased input version (`found`, by
    vid), or an input of the same transaction redacted before (`passed`, by uid)."""
    in_batch: dict[str, Erasing] = {}
    for row in late:  # an input of the same batch that is redacted passes it on
        cause = next((found[v] for v in row["input_vids"] if v in found), None)
        cause = cause or next((passed[u] for u in row["inputs"] if u in passed), None)
        if cause is None:
            continue
        if refuse:
            raise InputError(_refusal(row["uid"], cause))
        in_batch[row["uid"]] = passed[row["uid"]] = cause
    return in_batch


def mark(tx: Tx, rows: Sequence[Mapping[str, Any]], causes: Mapping[str, Erasing]) -> None:
    """After the rows are created: name the erasing event and the hash on each redacted one."""
    marks = [
        {"vid": r["vid"], "event": causes[r["uid"]].event, "sha256": r["erased_sha256"]}
        for r in rows
        if r["uid"] in causes
    ]
    if marks:
        tx.run(MARK_REDACTED, rows=marks)


def _refusal(uid: str, cause: Erasing) -> str:
    return (
        f"artifact {uid!r}: input {cause.input} is erased by event {cause.event_id!r}, so "
        "anything derived from it may quote the erased text; nothing was recorded. Re-read "
        "what is served now and record from that (with on_stale='withdraw' the artifact is "
        "recorded withdrawn, its text redacted)"
    )


def _erasing_inputs(tx: Tx, ns: str, rows: Sequence[Mapping[str, Any]]) -> dict[str, Erasing]:
    """The rows' input versions (locked) that an erasure erased or is erasing, by vid."""
    vids = sorted({v for r in rows for v in r["input_vids"]})
    open_events = [e for e in tx.run(OPEN_ERASURES, ns=ns) if _erases(e["type"], e["spec"])]
    roots = {k: e["key"] for e in open_events for k in e["root_keys"]}
    found: dict[str, Erasing] = {}
    for row in tx.run(ERASED_INPUTS, vids=vids, root_keys=sorted(roots)):
        erasers = [row["erased_by"]] if row["erased_by"] else []
        erasers += [
            roots[r["key"]] for r in row["roots"] if roots[r["key"]] not in r["published_by"]
        ]
        if erasers:
            found[row["vid"]] = Erasing(_pin(row["vid"]), erasers[0])
    return found


def _apply(tx: Tx, rows: Sequence[MutableMapping[str, Any]], causes: Mapping[str, Erasing]) -> None:
    """Each row's text replaced by its redaction, judged by its event's fingerprints."""
    events = sorted({c.event for c in causes.values()})
    prints = {r["key"]: r["prints"] for r in tx.run(EVENT_PRINTS, keys=events)}
    for row in rows:
        recorded = prints.get(causes[row["uid"]].event)
        matcher = Matcher.of(recorded) if recorded is not None else None
        marker = redacted({**row, "head": True}, matcher)
        row.update(
            content=None,
            meta=marker["meta"],
            recipe=marker["recipe"],
            erased_sha256=marker["sha256"],
            embedding=None,
            meta_terms=None,
        )


def _erases(kind: str, spec: str | None) -> bool:
    """Whether an event erases its roots' old text: a delete, or a correct with erase."""
    if kind == "delete":
        return True
    stored = json.loads(spec) if spec else {}
    return isinstance(stored, dict) and stored.get("erase") is True


def _pin(vid: str) -> str:
    """`ns/uid@N` -> `uid@N`."""
    return vid.split("/", 1)[1]


def _json(text: str | None) -> dict[str, Any]:
    value = json.loads(text) if text else {}
    return value if isinstance(value, dict) else {"value": value}
