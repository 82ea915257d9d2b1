"""Served reads other than search: by uid, kind and substring, listings, export, counts.

Like search, every read here returns served (`Live`) versions only and says which version
it served; whether a read counts as a use is the caller's to say (`MemoryStore.retrieve`'s
`record_use`), since the engine's own reads (a correction's base, a tool's interface
records) are not uses. Each function runs named queries of `cypher/serving/retrieve/`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TextIO

from memorepair import queries
from memorepair.codec import artifact_from_row
from memorepair.errors import InputError
from memorepair.interchange import dump_lines
from memorepair.model import Artifact, artifact_key
from memorepair.store import Row, Store

COUNT_BY_VISIBILITY = queries.named("serving/retrieve/count_by_visibility")
EXPORT_LIVE = queries.named("serving/retrieve/export_live")
RETRIEVE = queries.named("serving/retrieve/retrieve")
RETRIEVE_RELATED = queries.named("serving/retrieve/retrieve_related")
RETRIEVE_UID = queries.named("serving/retrieve/retrieve_uid")
RETRIEVE_SCAN_REST = queries.named("serving/retrieve/retrieve_scan_rest")
READ_SERVED = queries.named("serving/retrieve/read_served")
LIST_SERVED = queries.named("serving/retrieve/list_served")
LIST_PATHS = queries.named("serving/retrieve/list_paths")

Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class Served:
    """A served version with its uid's times: first recorded, and this version published."""

    artifact: Artifact
    created_at: datetime
    updated_at: datetime


def retrieve(
    store: Store,
    ns: str,
    *,
    uid: str | None = None,
    kind: str | None = None,
    text: str | None = None,
    related: bool = False,
    limit: int = 20,
    scan: int,
) -> list[Artifact]:
    """Live artifacts only: by uid (or its RELATED neighbours), else by kind and substring
    within a scan of at most `scan` current versions."""
    if limit < 1 or limit > 10_000:
        raise InputError(f"limit must be between 1 and 10000, got {limit}")
    if related:
        if uid is None:
            raise InputError("related retrieval needs a uid")
        rows = store.serve(RETRIEVE_RELATED, key=artifact_key(ns, uid), limit=limit)
    elif uid is not None:
        rows = store.serve(RETRIEVE_UID, key=artifact_key(ns, uid))
    else:
        rows = _scan(store, ns, kind, text, limit, scan)
    return [artifact_from_row(row["artifact"], row["visibility"]) for row in rows]


def _scan(
    store: Store, ns: str, kind: str | None, text: str | None, limit: int, scan: int
) -> list[Row]:
    """Live artifacts by kind and substring, in uid order: a scan of at most `scan`
    current versions (MEMOREPAIR_RETRIEVE_SCAN), refused rather than silently short."""
    fixed = {"prefix": artifact_key(ns, ""), "scan": scan}
    rows = store.serve(RETRIEVE, kind=kind, text=text, limit=limit, **fixed)
    if len(rows) < limit and store.serve(RETRIEVE_SCAN_REST, **fixed)[0]["more"]:
        raise InputError(
            f"retrieve by kind/substring scans, and namespace {ns!r} has more than "
            f"MEMOREPAIR_RETRIEVE_SCAN={scan} artifacts (it found {len(rows)} of "
            f"{limit} in the first {scan} by uid): use `search --mode text` (indexed), "
            "a smaller limit, or raise MEMOREPAIR_RETRIEVE_SCAN"
        )
    return rows


def served(store: Store, ns: str, uids: Sequence[str]) -> dict[str, Served]:
    """The served version of each uid that has one, with its uid's times (one read)."""
    keys = [artifact_key(ns, uid) for uid in dict.fromkeys(uids)]
    rows = store.serve(READ_SERVED, keys=keys) if keys else []
    return {(s := _served(row)).artifact.uid: s for row in rows}


def listing(store: Store, ns: str, *, uid_prefix: str, skip: int, limit: int) -> list[Served]:
    """Served versions whose uid starts with `uid_prefix`, most recently published first,
    one page (`skip`, `limit`)."""
    if skip < 0 or not 1 <= limit <= 10_000:
        raise InputError(f"skip must be >= 0 and limit in [1, 10000], got {skip}, {limit}")
    rows = store.serve(LIST_SERVED, ns=ns, prefix=uid_prefix, skip=skip, limit=limit)
    return [_served(row) for row in rows]


def paths(store: Store, ns: str, uid_prefix: str) -> list[list[str]]:
    """The distinct '/'-separated paths above the served uids starting with `uid_prefix`
    (`a/b/key` lies under `[a, b]`)."""
    rows = store.serve(LIST_PATHS, ns=ns, prefix=uid_prefix)
    return [list(row["path"]) for row in rows]


def export(
    store: Store,
    ns: str,
    handle: TextIO,
    progress: Progress,
    served: Callable[[list[tuple[str, int]]], None] = lambda versions: None,
) -> int:
    """Write the served memory as JSON Lines to an open text stream; artifacts written.
    `served` is told which versions were handed out (uid, version), once written."""
    rows = store.read(EXPORT_LIVE, ns=ns)
    progress(0, len(rows))
    artifacts = []
    related = []
    for row in rows:
        artifact = artifact_from_row({**row["artifact"], "ns": ns}, "Live")
        artifacts.append(
            artifact.model_dump(
                mode="json", exclude={"version", "ns", "visibility"}, exclude_none=True
            )
        )
        related += [(artifact.uid, other) for other in row["related"]]
    for done, line in enumerate(dump_lines(artifacts, related), start=1):
        handle.write(line + "\n")
        progress(min(done, len(rows)), len(rows))
    handle.flush()
    served([(str(r["artifact"]["uid"]), int(r["artifact"]["version"])) for r in rows])
    return len(artifacts)


def counts(store: Store, ns: str) -> dict[str, int]:
    """Artifacts of the namespace by visibility."""
    rows = store.read(COUNT_BY_VISIBILITY, ns=ns)
    return {k: int(v or 0) for k, v in rows[0].items()}


def _served(row: Mapping[str, Any]) -> Served:
    return Served(
        artifact_from_row({**row["artifact"]}, "Live"),
        _native(row["created_at"]),
        _native(row["updated_at"]),
    )


def _native(value: Any) -> datetime:
    """A Neo4j DateTime as a Python datetime (the driver's own type otherwise)."""
    native = value.to_native() if hasattr(value, "to_native") else value
    if not isinstance(native, datetime):
        raise TypeError(f"expected a datetime, got {type(value).__name__}")
    return native
