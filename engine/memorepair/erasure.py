"""Erasure, the step after publication (SPEC §6) of an erasing event (every `delete`, and a
`correct` with `erase: true`): no copy of the erased text stays anywhere in the graph.

After publication, every version that holds the roots' old text or was derived from it
is redacted: the roots' versions from before the event, everything reachable from them
over INFLUENCES that is not served (superseded, withdrawn, removed), and the staged
successors that would have replaced those (discarded attempts). A redacted version keeps
its uid, version, kind and lineage, and gains `erased_by` (the event), `erased_at` and
`erased_sha256` (of what was erased). Strings elsewhere that quote the text (a
validation verdict, a WITHDREW edge's reason, an event's reason or stored spec) are
scrubbed too.

What counts as a copy is decided by *fingerprints* of the erased text, recorded on the
event first thing (so a crash never loses them, and the proof can run later): SHA-256 of
every 8-word phrase of it (of the whole text when shorter, from 3 words), and of every
identifier-like token (a word of 5+ characters holding a digit: booking references,
passport numbers). `memorepair audit erasure EVENT` scans every property of every node
and relationship of the namespace for them (`audit.py`). Fingerprints only find copies:
a paraphrase (an LLM's) is not found by them; the graph's structure (redacting whatever
was derived from the roots) is what removes those.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from memorepair import queries
from memorepair.codec import canonical_json, stored_json
from memorepair.events import Event
from memorepair.fingerprints import Matcher, digest, fingerprints, strings_in
from memorepair.model import artifact_key
from memorepair.store import Store

ROOT_VERSIONS = queries.named("erasure/root_versions")
RECORD_FINGERPRINTS = queries.named("erasure/record_fingerprints")
ERASABLE = queries.named("erasure/erasable_versions")
READ_ERASABLE = queries.named("erasure/read_versions")
REDACT = queries.named("erasure/redact_versions")
REASONS = queries.named("erasure/reasons")
SCRUB_REASONS = queries.named("erasure/scrub_reasons")
EVENT_TEXTS = queries.named("erasure/event_texts")
SCRUB_EVENTS = queries.named("erasure/scrub_events")

#: What a scrubbed string becomes (it quoted erased text).
SCRUBBED = "[erased]"


def erase(store: Store, event: Event) -> dict[str, Any]:
    """Redact every copy of the event's erased text; idempotent, so a resumed run repeats
    it. Returns the figures recorded with the `erased` phase."""
    matcher = Matcher.of(_fingerprints(store, event))
    vids = store.read(ERASABLE, event_key=event.key, keys=_root_keys(event))[0]["vids"]
    for batch in store.batched(vids):
        rows = store.read(READ_ERASABLE, vids=batch)
        store.write(REDACT, event_key=event.key, rows=[_redaction(r, matcher) for r in rows])
    scrubbed = _scrub_reasons(store, event, vids, matcher)
    scrubbed += _scrub_events(store, event, matcher)
    figures = {
        "erased_versions": len(vids),
        "erased_strings": scrubbed,
        "erased_at": datetime.now(UTC).isoformat(timespec="seconds"),
    }
    event.complete("erased", figures, status="completed")
    return figures


def _root_keys(event: Event) -> list[str]:
    return [artifact_key(event.spec.ns, uid) for uid in event.spec.roots]


def _fingerprints(store: Store, event: Event) -> list[str]:
    """The event's recorded fingerprints, or (first run) those of its roots' old versions,
    recorded before any text is redacted."""
    rows = store.read(ROOT_VERSIONS, event_key=event.key, keys=_root_keys(event))
    recorded = rows[0]["recorded"] if rows else None
    if recorded is not None:
        return list(recorded)
    versions = rows[0]["versions"] if rows else []
    texts = [t for v in versions for t in strings_in([v["content"] or "", _json(v["meta"])])]
    prints = fingerprints(texts)
    hashes = [f"{v['vid']}:{digest(_erased_text(v))}" for v in versions]
    store.write(RECORD_FINGERPRINTS, event_key=event.key, prints=prints, hashes=hashes)
    return prints


def _redaction(row: Mapping[str, Any], matcher: Matcher) -> dict[str, Any]:
    """A version's redaction: text gone (a withdrawn current version keeps the meta and
    recipe parts that do not quote the erased text, for a later retry), hash kept."""
    keep_parts = bool(row["head"])
    meta = _json(row["meta"]) if keep_parts else {}
    kept = {k: v for k, v in meta.items() if not matcher.hits([k, v])} if meta else {}
    recipe = row["recipe"] if keep_parts and not matcher.hits(row["recipe"] or "") else None
    return {
        "vid": row["vid"],
        "sha256": digest(_erased_text(row)),
        "meta": stored_json(kept),
        "recipe": recipe,
    }


def _erased_text(row: Mapping[str, Any]) -> str:
    return canonical_json([row.get("content"), row.get("meta"), row.get("recipe")])


def _scrub_reasons(store: Store, event: Event, vids: list[str], matcher: Matcher) -> int:
    """WITHDREW reasons and details into erased versions that quote the erased text."""
    scrubbed = 0
    for batch in store.batched(vids):
        rows = [
            {
                "id": r["id"],
                "reason": _scrub(r["reason"], matcher),
                "detail": _scrub(r["detail"], matcher),
            }
            for r in store.read(REASONS, vids=batch)
            if matcher.hits([r["reason"] or "", r["detail"] or ""])
        ]
        if rows:
            store.write(SCRUB_REASONS, rows=rows)
            scrubbed += len(rows)
    return scrubbed


def _scrub_events(store: Store, event: Event, matcher: Matcher) -> int:
    """Events of the namespace whose reason or stored spec quotes the erased text."""
    rows = [
        {
            "key": r["key"],
            "reason": _scrub(r["reason"], matcher),
            "spec": _scrub_spec(r["spec"], matcher),
        }
        for r in store.read(EVENT_TEXTS, ns=event.spec.ns)
        if matcher.hits([r["reason"] or "", r["spec"] or ""])
    ]
    if rows:
        store.write(SCRUB_EVENTS, rows=rows)
    return len(rows)


def _scrub_spec(spec: str | None, matcher: Matcher) -> str | None:
    """A stored event spec with every string that quotes the erased text scrubbed."""
    if spec is None:
        return None
    return canonical_json(_scrubbed(json.loads(spec), matcher))


def _scrubbed(value: Any, matcher: Matcher) -> Any:
    if isinstance(value, str):
        return SCRUBBED if matcher.hits(value) else value
    if isinstance(value, dict):
        return {k: _scrubbed(v, matcher) for k, v in value.items()}
    if isinstance(value, list):
        return [_scrubbed(v, matcher) for v in value]
    return value


def _scrub(text: str | None, matcher: Matcher) -> str | None:
    return SCRUBBED if text is not None and matcher.hits(text) else text


def _json(text: str | None) -> dict[str, Any]:
    value = json.loads(text) if text else {}
    return value if isinstance(value, dict) else {"value": value}
