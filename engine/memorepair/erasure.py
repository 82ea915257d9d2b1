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

What counts as a copy is decided by *fingerprints* of the erased text (`fingerprints.py`),
recorded on the event before any successor is built (so a crash never loses them, the
successors are checked against them, and the proof can run later): hashes of every 8-word
phrase of it (of the whole text when shorter, from 3 words), and of every identifier-like
token (booking references, passport numbers). A phrase that a correction's replacement
or other served memory still says (a template other records share) is not the erased
text's own and is left out; so is an identifier that served memory recorded no later than
the roots states too (it cannot have been copied from them), never one recorded after.
`memorepair audit erasure EVENT` scans every text property of every node and relationship
of the namespace for them, and so does the erasure itself before it lets the event
complete. Fingerprints only find copies: a
paraphrase (an LLM's) is not found by them; the graph's structure (redacting whatever
was derived from the roots) is what removes those.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from memorepair import events, queries
from memorepair.codec import canonical_json, stored_json
from memorepair.events import Event
from memorepair.fingerprints import Matcher, fingerprints, sha256_hex, strings_in
from memorepair.model import RepairEventSpec, artifact_key
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
SCAN_ARTIFACTS = queries.named("erasure/scan_artifacts")
SCAN_EVENTS = queries.named("erasure/scan_events")
LIVE_TEXTS = queries.named("erasure/live_texts")

#: What a scrubbed string becomes (it quoted erased text).
SCRUBBED = "[erased]"


def prepare(store: Store, event: Event) -> Matcher:
    """The fingerprints of what the event erases, recorded on the event before anything
    is built: execution leaves meta that carries one out of a successor, and validation
    fails a successor that still carries one (a plugin's, say), so none is published."""
    return Matcher.of(_fingerprints(store, event))


def planned(store: Store, spec: RepairEventSpec, cascade: Iterable[str] = ()) -> Matcher | None:
    """What `prepare` would record for an event that has not run (a plan): computed from
    the roots' current versions and the event's replacements, written nowhere; the
    `cascade` (uids) is still served then, and is what the event would withdraw."""
    if not spec.erases:
        return None
    keys = [artifact_key(spec.ns, uid) for uid in spec.roots]
    (row,) = store.read(ROOT_VERSIONS, event_key=None, keys=keys)
    latest: dict[str, tuple[int, str | None]] = {}  # a replacement without meta keeps it
    for version in row["versions"]:
        uid, number = version["vid"].split("/", 1)[1].rsplit("@", 1)
        if int(number) > latest.get(uid, (0, None))[0]:
            latest[uid] = (int(number), version["meta"])
    kept = [
        {
            "content": r.content,
            "meta": stored_json(r.meta)
            if r.meta is not None
            else latest.get(r.replaces, (0, None))[1],
        }
        for r in spec.replacements
    ]
    prints = _prints(row["versions"], kept, spec.roots)
    skip = {*cascade, *spec.roots}
    return Matcher.of(set(prints) - _shared(store, spec.ns, prints, row["first_at"], skip))


def erase(store: Store, event: Event) -> dict[str, Any]:
    """Redact every copy of the event's erased text, then scan the namespace for the
    fingerprints as `audit erasure` does: the event completes only when no copy is left.

    A copy the event cannot reach (a record outside its cascade that quotes the text)
    leaves the event open, named in the figures returned (`copies`): delete or correct
    it, then `memorepair resume` finishes the erasure. Idempotent, so a resumed run
    repeats it."""
    matcher = prepare(store, event)
    vids = store.read(ERASABLE, event_key=event.key, keys=_root_keys(event))[0]["vids"]
    for batch in store.batched(vids):
        rows = store.read(READ_ERASABLE, vids=batch)
        store.write(REDACT, event_key=event.key, rows=[_redaction(r, matcher) for r in rows])
    scrubbed = _scrub_reasons(store, event, vids, matcher)
    scrubbed += _scrub_events(store, event, matcher)
    copies, scanned = scan(store, event.spec.ns, matcher)
    figures: dict[str, Any] = {
        "erased_versions": len(vids),
        "erased_strings": scrubbed,
        "erased_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "erasure_copies": len(copies),
    }
    if copies:
        event.note(figures)  # stays open: `resume` scans again once the copies are gone
    else:
        event.complete("erased", figures, status="completed")
    return {**figures, "ok": not copies, "copies": copies[:COPIES_SHOWN], "scanned": scanned}


#: Copies a report names at most (`audit erasure` lists them all).
COPIES_SHOWN = 20


def scan(store: Store, ns: str, matcher: Matcher) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """Every property of every node and relationship of the namespace that carries one of
    the fingerprints (the proof `audit erasure` shows), and how much was scanned."""
    copies: list[dict[str, Any]] = []
    seen: set[str] = set()
    scanned = {"nodes": 0, "relationships": 0}
    for row in [*store.read(SCAN_EVENTS, ns=ns), *_artifact_pages(store, ns)]:
        scanned["nodes"] += 1
        copies += _copies(row["id"], "/".join(row["labels"]), row["props"], matcher)
        for rel in row["rels"]:
            if rel["id"] is None or rel["id"] in seen:
                continue
            seen.add(rel["id"])
            scanned["relationships"] += 1
            copies += _copies(f"{rel['type']} of {row['id']}", rel["type"], rel["props"], matcher)
    return copies, scanned


def _artifact_pages(store: Store, ns: str) -> Iterator[dict[str, Any]]:
    after = ""
    while True:
        page = store.read(SCAN_ARTIFACTS, ns=ns, after=after, limit=store.batch_size)
        yield from page
        if len(page) < store.batch_size:
            return
        after = page[-1]["id"]


def _copies(
    where: str, kind: str, props: dict[str, Any] | list[list[Any]] | None, matcher: Matcher
) -> list[dict[str, Any]]:
    """The properties (a map, or [name, value] pairs) that carry a fingerprint."""
    pairs: list[tuple[str, Any]] = sorted(
        props.items() if isinstance(props, dict) else ((str(k), v) for k, v in props or [])
    )
    return [
        {"where": where, "labels": kind, "property": name}
        for name, value in pairs
        if isinstance(value, str | list | dict) and matcher.hits(value)
    ]


def _root_keys(event: Event) -> list[str]:
    return [artifact_key(event.spec.ns, uid) for uid in event.spec.roots]


def _fingerprints(store: Store, event: Event) -> list[str]:
    """The event's recorded fingerprints, or (first run) those of its roots' old versions
    (with a retry's, those its original event recorded), recorded before any text is
    redacted."""
    (row,) = store.read(ROOT_VERSIONS, event_key=event.key, keys=_root_keys(event))
    if row["recorded"] is not None:
        return list(row["recorded"])
    versions = row["versions"]
    prints = _prints(versions, row["replacements"], event.spec.roots)
    shared = _shared(store, event.spec.ns, prints, row["first_at"])  # after the barrier
    prints = sorted(set(prints) - shared)
    if event.spec.retry_of is not None:  # its roots' texts were redacted by the original
        original = events.record(store, event.spec.ns, event.spec.retry_of)
        prints = sorted({*prints, *(original.get("erasure_prints") or [])})
    hashes = [f"{v['vid']}:{sha256_hex(_erased_text(v))}" for v in versions]
    store.write(RECORD_FINGERPRINTS, event_key=event.key, prints=prints, hashes=hashes)
    return prints


def _shared(
    store: Store, ns: str, prints: Iterable[str], first_at: Any, skip: Iterable[str] = ()
) -> set[str]:
    """The fingerprints that served memory (other than `skip`) says too, which are not the
    erased text's own: a phrase any of it says (a template or sentence other records
    share would otherwise count every one of them as a copy), and an identifier said by an
    artifact that existed no later than the roots' first version (`first_at`), which
    cannot have copied it (two users' records naming one shared account token). An
    identifier in an artifact recorded after the roots (an agent's note quoting a passport
    number) stays a fingerprint, so the erasure finds that copy."""
    matcher = Matcher.of(prints)
    if not matcher:
        return set()
    phrases, identifiers = matcher.phrases_only, matcher.identifiers_only
    skipped = set(skip)
    shared: set[str] = set()
    after = ""
    while True:
        page = store.read(LIVE_TEXTS, ns=ns, after=after, limit=store.batch_size, first_at=first_at)
        for row in page:
            if row["uid"] in skipped:
                continue
            texts = [row["content"] or "", row["meta"] or ""]
            shared |= phrases.found_in(texts)
            if row["before_roots"]:
                shared |= identifiers.found_in(texts)
        if len(page) < store.batch_size:
            return shared
        after = page[-1]["id"]


def _prints(
    versions: Sequence[Mapping[str, Any]],
    kept: Sequence[Mapping[str, Any]],
    uids: Sequence[str],
) -> list[str]:
    """Fingerprints of the erased versions' content and meta, less those a replacement
    carries (a correction's new text is not erased text) and the roots' own uids (a
    text that names its uid, "fact rec-0": the uid is structure every redacted version,
    input list and event keeps, never erased)."""
    texts = [t for v in versions for t in strings_in([v["content"] or "", _json(v["meta"])])]
    staying = [t for v in kept for t in strings_in([v["content"] or "", _json(v["meta"])])]
    return sorted(Matcher.of(fingerprints(texts)).without([*staying, *uids]).prints)


def _redaction(row: Mapping[str, Any], matcher: Matcher) -> dict[str, Any]:
    """A version's redaction: text gone (a withdrawn current version keeps the meta and
    recipe parts that do not quote the erased text, for a later retry), hash kept."""
    keep_parts = bool(row["head"])
    meta = _json(row["meta"]) if keep_parts else {}
    kept = {k: v for k, v in meta.items() if not matcher.hits([k, v])} if meta else {}
    recipe = row["recipe"] if keep_parts and not matcher.hits(row["recipe"] or "") else None
    return {
        "vid": row["vid"],
        "sha256": sha256_hex(_erased_text(row)),
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
