"""Batches that are atomic across crashes: staged under an import record, published at once.

A batch too large for one transaction (`record_many`, `import`) is written in many: each
of them writes its versions *staged* (label `Importing`, never `Head`), so no serving
read, search, cascade or barrier sees any of them. An `(:Import)` node records the batch
(id, namespace, digest of the input, count, who writes it, status). Once every version is
staged the record is marked `written`, and one final transaction publishes the whole
import: each version becomes current, served only if every input it read is served now
(the writer's rule, applied at publication: an input withdrawn, superseded or deleted
meanwhile makes it `late_arrival` or `stale_input`, withdrawn and joined to the event that
holds that support). A process killed before that transaction leaves nothing served:
`resume` publishes an import whose versions were all written, and discards (deletes) the
staged part of any other, after which running the same input again writes it whole.

Running a batch again is safe: its items that are stored already, identical (`differences`
finds none), are skipped; a different one is refused, naming it and the fields that differ.
"""

from __future__ import annotations

import getpass
import hashlib
import os
import socket
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memorepair import queries
from memorepair.errors import InputError, MemoRepairError
from memorepair.graphs import topological
from memorepair.store import LOCK_HEADS, Store, Tx

GET_IMPORT = queries.named("importing/get_import")
OPEN_IMPORTS = queries.named("importing/open_imports")
BEGIN_IMPORT = queries.named("importing/begin_import")
MARK_WRITTEN = queries.named("importing/mark_written")
STAGE_ARTIFACTS = queries.named("importing/stage_artifacts")
STAGE_EMBEDDED_ARTIFACTS = queries.named("importing/stage_embedded_artifacts")
STAGE_RELATED = queries.named("importing/stage_related")
LOCK_IMPORT = queries.named("importing/lock_import")
STAGED_INPUT_KEYS = queries.named("importing/staged_input_keys")
READ_STAGED = queries.named("importing/read_staged")
UNSERVED_INPUTS = queries.named("importing/unserved_inputs")
PUBLISH_SERVED = queries.named("importing/publish_served")
PUBLISH_IMPORT = queries.named("importing/publish_import")
END_IMPORT = queries.named("importing/end_import")
DISCARD_STAGED = queries.named("importing/discard_staged")
READ_FIRST_VERSIONS = queries.named("importing/read_first_versions")

#: The stored fields an item of a batch run again must match to be skipped.
COMPARED = ("kind", "arch", "content", "value", "repair_cost", "recipe", "meta", "inputs")


def import_key(ns: str, import_id: str) -> str:
    return f"{ns}/{import_id}"


def digest_of(parts: Iterable[bytes]) -> str:
    """SHA-256 of an input (a file's bytes, or a batch's items as canonical JSON)."""
    sha = hashlib.sha256()
    for part in parts:
        sha.update(part)
    return sha.hexdigest()


def file_digest(path: Path) -> str:
    """The digest of a memory file, read in blocks (the id of its import by default)."""
    try:
        with path.open("rb") as handle:
            return digest_of(iter(lambda: handle.read(1 << 20), b""))
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror}") from exc


def items_digest(items: Iterable[Any]) -> str:
    """The digest of a batch given in memory (pydantic items, in order)."""
    return digest_of(i.model_dump_json().encode() + b"\n" for i in items)


# ---- running a batch again: identical items are skipped --------------------------------


def differences(
    row: Mapping[str, Any], stored: Mapping[str, Any], pins: Sequence[str | None]
) -> list[str]:
    """The fields in which an item (as the write queries take it: `row`) differs from the
    stored first version of its uid; `pins` are the input versions the item names (`vid`
    for a pinned input, None for a current one), compared with the versions the stored
    one was derived from. Empty: identical, so running the batch again skips it."""
    fields = [name for name in COMPARED if _norm(row.get(name)) != _norm(stored.get(name))]
    edges = {int(e["pos"]): e["vid"] for e in stored.get("input_vids") or []}
    if any(pin is not None and edges.get(pos) != pin for pos, pin in enumerate(pins)):
        fields.append("pinned input versions")
    return fields


def _norm(value: Any) -> Any:
    """Equal values compare equal whatever their stored form (1 and 1.0; [] and None)."""
    if isinstance(value, list | tuple):
        return [_norm(v) for v in value] or None
    if isinstance(value, bool):  # True == 1 in Python, not in what was recorded
        return ("bool", value)
    if value is None:
        return value
    if isinstance(value, int | float):
        return float(value)
    return value


def first_versions(store: Store, vids: Sequence[str]) -> dict[str, dict[str, Any]]:
    """The stored first versions among `vids`, by uid (any state, staged ones included)."""
    found: dict[str, dict[str, Any]] = {}
    for chunk in store.batched(list(vids)):
        found.update({row["uid"]: dict(row) for row in store.read(READ_FIRST_VERSIONS, vids=chunk)})
    return found


# ---- the import record ------------------------------------------------------------------


@dataclass(frozen=True)
class Owner:
    """Who writes an import: a process on a host (to tell an interrupted one from a live)."""

    host: str
    pid: int
    by: str

    @classmethod
    def this_process(cls) -> Owner:
        try:
            user = getpass.getuser()
        except (KeyError, OSError):  # no name for this uid (a container)
            user = str(os.getuid())
        return cls(socket.gethostname(), os.getpid(), user)

    def alive(self) -> bool | None:
        """Whether the process still runs (None: another host, so this one cannot tell)."""
        if self.host != socket.gethostname():
            return None
        if self.pid == os.getpid():
            return True
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:  # someone else's process
            return True
        return True


def _owner(record: Mapping[str, Any]) -> Owner:
    return Owner(str(record.get("host")), int(record.get("pid") or 0), str(record.get("by")))


def begin(store: Store, ns: str, import_id: str, *, digest: str, count: int) -> tuple[str, int]:
    """Open the record of a batch about to be staged; returns its key and how many staged
    versions of an interrupted run of the same input were discarded first.

    The same input has the same id (by default its digest), so a run after a crash finds
    the record its killed run left: its staged part is discarded and written again. A
    record whose writer still runs on this host is refused, never taken over."""
    key = import_key(ns, import_id)
    found = store.read(GET_IMPORT, key=key)
    discarded = 0
    if found:
        record, staged = found[0]["import"], int(found[0]["staged"])
        if record.get("digest") != digest and record.get("status") == "published":
            raise InputError(
                f"import id {import_id!r} was used for another input (published "
                f"{record.get('ended_at')}); give this batch another id"
            )
        if record.get("status") == "open" and _owner(record).alive():
            owner = _owner(record)
            raise InputError(
                f"import {import_id!r} is being written by process {owner.pid} on "
                f"{owner.host} (started {record.get('started_at')}); wait for it to end"
            )
        if staged:
            discard_staged(store, key)
            discarded = staged
    owner = Owner.this_process()
    store.write(
        BEGIN_IMPORT,
        key=key,
        ns=ns,
        id=import_id,
        digest=digest,
        count=count,
        host=owner.host,
        pid=owner.pid,
        by=owner.by,
    )
    return key, discarded


def stage(tx: Tx, ns: str, key: str, rows: list[dict[str, Any]]) -> None:
    """Write rows (as `recording` builds them) staged under the import `key`."""
    plain = [r for r in rows if r.get("embedding") is None]
    embedded = [r for r in rows if r.get("embedding") is not None]
    if plain:
        tx.run(STAGE_ARTIFACTS, ns=ns, key=key, rows=plain)
    if embedded:
        tx.run(STAGE_EMBEDDED_ARTIFACTS, ns=ns, key=key, rows=embedded)


def stage_related(store: Store, key: str, rows: list[dict[str, str]]) -> None:
    for chunk in store.batched(rows):
        store.write(STAGE_RELATED, key=key, rows=chunk)


def mark_written(store: Store, key: str, staged: int) -> None:
    """Every version staged: from here on `resume` publishes the import rather than
    discarding it."""
    [row] = store.write(MARK_WRITTEN, key=key, staged=staged)
    if not row["marked"]:
        raise MemoRepairError(
            f"import {key!r}: {staged} versions staged, but its record is not open for that "
            "count (another process discarded or rewrote it); run the same input again"
        )


def discard_staged(store: Store, key: str) -> None:
    store.autocommit(DISCARD_STAGED, key=key)


def discard(store: Store, key: str, *, status: str, error: str | None = None) -> None:
    """Delete what an import staged and close its record (`failed` or `discarded`)."""
    discard_staged(store, key)
    store.write(END_IMPORT, key=key, status=status, live=None, withdrawn=None, error=error)


# ---- publication: the one transaction that serves a batch -------------------------------


@dataclass(frozen=True)
class Published:
    """What a publication served: how many versions, and those it withdrew (by uid)."""

    count: int
    withdrawn: list[str]


def publish(store: Store, key: str) -> Published:
    """Publish every staged version of the import `key` in one transaction."""
    return store.transaction(lambda tx: _publish(tx, key))


def _publish(tx: Tx, key: str) -> Published:
    found = tx.run(LOCK_IMPORT, key=key)
    state = found[0] if found else None
    if state is None or state["status"] != "open" or not state["written"]:
        status = "missing" if state is None else state["status"]
        raise MemoRepairError(f"import {key!r} cannot be published (it is {status})")
    if state["staged"] != state["count"]:
        raise MemoRepairError(
            f"import {key!r} has {state['staged']} of its {state['count']} versions staged; "
            "it cannot be published: discard it (`memorepair resume`) and run the input again"
        )
    # lock the inputs' current versions as a writer does: a barrier either committed
    # before (its withdrawal is read below) or waits, then reaches the published versions
    keys = [row["key"] for row in tx.run(STAGED_INPUT_KEYS, key=key)]
    for chunk in [keys[i : i + 10_000] for i in range(0, len(keys), 10_000)]:
        tx.run(LOCK_HEADS, keys=chunk)
    [unserved] = tx.run(UNSERVED_INPUTS, key=key)
    if not unserved["unserved"]:  # the common case: every version served, no decisions
        [row] = tx.run(PUBLISH_SERVED, key=key)
        published = Published(int(row["published"]), [])
    else:
        rows = decide(tx.run(READ_STAGED, key=key))
        tx.run(PUBLISH_IMPORT, key=key, rows=rows)
        published = Published(len(rows), [r["uid"] for r in rows if not r["live"]])
    withdrawn = len(published.withdrawn)
    live = published.count - withdrawn
    tx.run(END_IMPORT, key=key, status="published", live=live, withdrawn=withdrawn, error=None)
    return published


def decide(staged: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Each staged version's visibility, inputs first: served only if every input version
    it read is served now; else withdrawn with the event holding that support, the same
    outcome (`stale_input` before `late_arrival`) a writer gets at record time."""
    by_vid = {row["vid"]: row for row in staged}
    inputs = {vid: _inputs(row) for vid, row in by_vid.items()}
    edges = [(i["vid"], vid) for vid, ins in inputs.items() for i in ins if i["staged"]]
    order, cyclic = topological(list(by_vid), edges)
    if cyclic:  # influence edges of an import are acyclic by validation; never guess
        raise MemoRepairError(f"staged versions on an influence cycle: {cyclic[:5]}")
    decided: dict[str, dict[str, Any]] = {}
    for vid in order:
        decided[vid] = {"vid": vid, "uid": by_vid[vid]["uid"], **_visibility(inputs[vid], decided)}
    return [decided[vid] for vid in order]


def _visibility(
    inputs: Sequence[Mapping[str, Any]], decided: Mapping[str, Mapping[str, Any]]
) -> dict[str, Any]:
    stale: str | None = None
    is_stale = False
    holders: list[str | None] = []
    for source in inputs:
        if source["staged"]:
            earlier = decided[source["vid"]]
            if not earlier["live"]:
                holders.append(earlier["held_by"])
        elif source["live"]:
            continue
        elif source["head"] and not source["removed"]:  # withdrawn by an event now
            holders.append(source["held_by"])
        else:  # superseded or deleted since it was read: the version read is stale
            is_stale = True
            stale = stale or source["holder"]
    live = not is_stale and not holders
    return {
        "live": live,
        "held_by": stale or next((h for h in holders if h), None),
        "outcome": None if live else "stale_input" if is_stale else "late_arrival",
    }


def _inputs(row: Mapping[str, Any]) -> list[dict[str, Any]]:
    """A staged version's inputs, one per position (an input several events touched is
    read once per event)."""
    by_pos: dict[int, dict[str, Any]] = {}
    for source in row["inputs"]:
        by_pos.setdefault(int(source["pos"]), {**source, "staged": bool(source["staged"])})
    return [by_pos[pos] for pos in sorted(by_pos)]


# ---- resume: finish or discard an interrupted import -------------------------------------


@dataclass(frozen=True)
class Resumed:
    """What `resume` did with one interrupted import."""

    import_id: str
    action: str  # published | discarded | running | elsewhere
    count: int
    staged: int
    live: int = 0
    withdrawn: int = 0
    detail: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {
            "import": self.import_id,
            "action": self.action,
            "count": self.count,
            "staged": self.staged,
            "live": self.live,
            "withdrawn": self.withdrawn,
            "detail": self.detail,
        }


def open_imports(store: Store, ns: str) -> list[dict[str, Any]]:
    return [
        {**row["import"], "staged": int(row["staged"])} for row in store.read(OPEN_IMPORTS, ns=ns)
    ]


def resume(
    store: Store, ns: str, import_id: str | None = None, *, discard_all: bool = False
) -> list[Resumed]:
    """Finish or discard the interrupted imports of a namespace (or the one named).

    An import whose versions were all staged (only its publication was missed) is
    published, unless `discard_all`; any other is discarded: its staged versions are
    deleted, and the same input run again writes it whole (its identical items that
    were stored before are skipped). An import whose writer still runs on this host is
    left alone; one started on another host is touched only when named."""
    records = open_imports(store, ns)
    if import_id is not None:
        records = [r for r in records if r["id"] == import_id]
        if not records:
            raise InputError(f"no interrupted import {import_id!r} in namespace {ns!r}")
    return [
        _resume_one(store, record, named=import_id is not None, discard_all=discard_all)
        for record in records
    ]


def _resume_one(
    store: Store, record: Mapping[str, Any], *, named: bool, discard_all: bool
) -> Resumed:
    key, count, staged = str(record["key"]), int(record["count"]), int(record["staged"])
    base = Resumed(str(record["id"]), "", count, staged)
    owner = _owner(record)
    alive = owner.alive()
    if alive:
        return _replace(base, "running", f"still written by process {owner.pid}; not touched")
    if alive is None and not named:
        return _replace(
            base,
            "elsewhere",
            f"started on {owner.host} (process {owner.pid}): resume it there, or name it "
            "with --import once that process is gone",
        )
    if record.get("written") and staged == count and not discard_all:
        published = publish(store, key)
        withdrawn = len(published.withdrawn)
        return Resumed(
            base.import_id,
            "published",
            count,
            staged,
            published.count - withdrawn,
            withdrawn,
            "every version was written; only the publication was missed",
        )
    discard(store, key, status="discarded", error="interrupted; discarded by resume")
    why = "discarded on request" if discard_all else f"{staged} of {count} versions were written"
    return _replace(base, "discarded", f"{why}: run the same input again to import it")


def _replace(base: Resumed, action: str, detail: str) -> Resumed:
    return Resumed(base.import_id, action, base.count, base.staged, detail=detail)
