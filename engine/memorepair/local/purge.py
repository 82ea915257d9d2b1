"""Physical erasure on the local server: the erased bytes leave the data directory.

An erasure (`erasure.py`) removes every copy of the erased text from the graph, but Neo4j
keeps bytes the graph no longer holds, in two places (measured on 5.26, docs/erasure.md):

- the transaction logs: every write is logged with its before-image, so the erasing
  transaction itself holds the text, and a log file is only deleted once it is rotated
  out and a checkpoint has passed it (the local server keeps no more than that:
  `db.tx_log.rotation.retention_policy=keep_none`, 1 MiB files, see `server.py`);
- the store files: a freed string, array or property record keeps its bytes (only its
  in-use flag, or its first block, is cleared) until Neo4j reuses the record.

Community has no procedure to checkpoint (`db.checkpoint` is Enterprise) nor to rotate
the log, and no offline store copy (`neo4j-admin database copy` is Enterprise; `dump` and
`load` copy the files byte for byte, freed records included). So `purge`:

1. stops the server (the shutdown checkpoint flushes every page), and counts the free
   records of the property, string and array stores in their files (`store_files`);
2. starts it again and writes filler nodes: Neo4j hands out freed record ids before new
   ones (`internal.dbms.strictly_prioritize_id_freelist`, on by default), so filler for
   as many records overwrites every freed one, and its volume rotates the transaction
   log past the erasure; then deletes the filler, and writes on until the log files
   from before are ones the next checkpoint deletes (`fill`);
3. stops the server again: the checkpoint writes the overwritten pages and deletes every
   log file but the last, which holds only filler;
4. starts it again if it was running.

Before step 2 and after step 3 it scans every file under the server's `data/` and `logs/`
for the fingerprints of every erasing event (`Matcher`, the same that `audit erasure`
uses on the graph), so the report shows where erased text was and that it is gone. The
scan reads printable runs of UTF-8, as Neo4j stores strings of more than a few dozen
characters; a short string is bit-packed into its property record and is not visible
to it (the purge overwrites those records all the same).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from memorepair import queries
from memorepair.errors import ConfigError, InputError
from memorepair.fingerprints import Matcher
from memorepair.local.server import TX_LOG_ROTATION_BYTES, LocalServer
from memorepair.local.store_files import (
    DYNAMIC_HEADER,
    PAGE,
    PROPERTY_PER_PAGE,
    FreeRecords,
    text_runs,
)
from memorepair.settings import Settings
from memorepair.store import Store

CREATE_FILLER = queries.named("local/purge/create_filler")
DELETE_FILLER = queries.named("local/purge/delete_filler")
ERASURE_PRINTS = queries.named("local/purge/erasure_prints")
OPEN_EVENTS = queries.named("local/purge/open_events")

#: Data bytes of a string or array store record, and such records to a page (`store_files`).
DYNAMIC_DATA = 120
DYNAMIC_PER_PAGE = PAGE // (DYNAMIC_DATA + DYNAMIC_HEADER)
#: Dynamic records per filler string or list: whole records only, since Neo4j writes a
#: record's data and no more, so a part-filled record would keep old bytes after it.
FILL_RECORDS = 8
#: A one-string list in the array store: a type byte, the list length, the string length.
LIST_HEADER = 9
#: Filler nodes per transaction (about 1 MiB of filler text: several transactions per
#: log file, see `fill`).
FILL_BATCH = 1_000

Say = Callable[[str], None]


def _quiet(message: str) -> None:
    """The default progress: nothing."""


# ---- how much filler -----------------------------------------------------------------------
@dataclass(frozen=True)
class FillerPlan:
    """Filler nodes (one full property record each); the first `texts` carry a string and
    the first `lists` a list, each FILL_RECORDS whole dynamic records long."""

    nodes: int
    texts: int
    lists: int

    @property
    def text(self) -> str:
        return "." * (FILL_RECORDS * DYNAMIC_DATA)

    @property
    def item(self) -> str:
        return "." * (FILL_RECORDS * DYNAMIC_DATA - LIST_HEADER)

    @property
    def bytes(self) -> int:
        return (self.texts + self.lists) * FILL_RECORDS * DYNAMIC_DATA + self.nodes * 32

    def as_dict(self) -> dict[str, int]:
        return {**asdict(self), "bytes": self.bytes}


def plan_filler(free: FreeRecords, rotation_bytes: int = TX_LOG_ROTATION_BYTES) -> FillerPlan:
    """Filler for every free record of each store, a page's worth more, and more log
    than one log file holds.

    Freed records are handed out first, so the filler lands on all of them before a store
    grows; what a purge leaves free holds only filler, which the next purge overwrites
    again, so repeated purges do not grow the stores.
    """
    strings = max(free.strings + DYNAMIC_PER_PAGE, math.ceil(rotation_bytes / DYNAMIC_DATA))
    texts = math.ceil(strings / FILL_RECORDS)
    lists = math.ceil((free.arrays + DYNAMIC_PER_PAGE) / FILL_RECORDS)
    nodes = max(free.properties + PROPERTY_PER_PAGE, texts, lists)
    return FillerPlan(nodes=nodes, texts=texts, lists=lists)


def fill(store: Store, plan: FillerPlan, logs_dir: Path, say: Say = _quiet) -> None:
    """Write the filler, delete it (its records are freed holding only filler), and make
    sure the log files that may hold erased text are ones the next checkpoint deletes.

    Neo4j deletes a log file (under `keep_none`) only when a later file, up to the one the
    checkpoint points into, holds a transaction before the last one. So the purge goes on
    writing until a file newer than every file from before it exists, then ends with two
    small transactions: whichever file they land in, every older file goes.
    """
    last_old = last_log_version(logs_dir)
    for first in range(0, plan.nodes, FILL_BATCH):
        _create(store, plan, first, min(plan.nodes, first + FILL_BATCH) - 1)
        say(f"  filler {min(plan.nodes, first + FILL_BATCH)}/{plan.nodes} nodes")
    clear_filler(store)
    more = FillerPlan(nodes=FILL_BATCH, texts=FILL_BATCH, lists=0)
    while last_log_version(logs_dir) <= last_old:
        _create(store, more, 0, more.nodes - 1)
        clear_filler(store)
    _create(store, FillerPlan(nodes=1, texts=0, lists=0), 0, 0)
    clear_filler(store)


def last_log_version(logs_dir: Path) -> int:
    """The highest transaction-log file version (-1: none); a file appears on rotation."""
    suffixes = (p.suffix[1:] for p in logs_dir.glob("neostore.transaction.db.*"))
    versions = [int(suffix) for suffix in suffixes if suffix.isdigit()]
    return max(versions, default=-1)


def _create(store: Store, plan: FillerPlan, first: int, last: int) -> None:
    store.write(
        CREATE_FILLER,
        from_id=first,
        to_id=last,
        texts=plan.texts,
        lists=plan.lists,
        text=plan.text,
        item=plan.item,
    )


def clear_filler(store: Store) -> int:
    """Delete filler nodes (also those a purge cut short left behind)."""
    deleted = 0
    while batch := store.write(DELETE_FILLER, limit=FILL_BATCH)[0]["deleted"]:
        deleted += batch
    return deleted


# ---- looking for erased text in files ---------------------------------------------------------
@dataclass(frozen=True)
class FileScan:
    """Which files under the scanned folders quote erased text (by fingerprint)."""

    files: int = 0
    bytes: int = 0
    copies: dict[str, int] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {"files": self.files, "bytes": self.bytes, "copies": dict(self.copies)}


def scan_files(roots: Iterable[Path], matcher: Matcher) -> FileScan:
    """Every file under `roots` (named relative to its root's parent), and the number of
    text runs in each that quote an erased text."""
    files = size = 0
    copies: dict[str, int] = {}
    for root in roots:
        for path in sorted(p for p in root.rglob("*") if p.is_file()):
            files += 1
            size += path.stat().st_size
            if not matcher.prints:
                continue
            hits = sum(1 for run in text_runs(path) if matcher.hits(run))
            if hits:
                copies[str(path.relative_to(root.parent))] = hits
    return FileScan(files, size, copies)


# ---- the purge ------------------------------------------------------------------------------
@dataclass(frozen=True)
class DiskState:
    """What a stopped server's files hold: erased text by file, log files, free records."""

    scan: FileScan
    tx_logs: list[str]
    free: FreeRecords

    def as_dict(self) -> dict[str, Any]:
        return {**self.scan.as_dict(), "tx_logs": self.tx_logs, "free_records": asdict(self.free)}


@dataclass(frozen=True)
class PurgeReport:
    erasing_events: int
    fingerprints: int
    before: DiskState
    after: DiskState
    filler: FillerPlan
    seconds: float

    @property
    def ok(self) -> bool:
        return not self.after.scan.copies

    def as_dict(self) -> dict[str, Any]:
        return {
            "erasing_events": self.erasing_events,
            "fingerprints": self.fingerprints,
            "before": self.before.as_dict(),
            "after": self.after.as_dict(),
            "filler": self.filler.as_dict(),
            "seconds": round(self.seconds, 1),
            "ok": self.ok,
        }


def purge(
    settings: Settings, connect: Callable[[], Store], *, force: bool = False, say: Say = _quiet
) -> PurgeReport:
    """Make the local server's data directory lose the bytes erasures freed (see the
    module docstring); the server is restarted twice and left running if it was.
    `connect` opens a store on it (the API's, which knows the password)."""
    if not settings.uses_local_server:
        raise ConfigError(
            "memorepair neo4j purge works on the local server only (NEO4J_URI is set); "
            "docs/erasure.md says what the operator of another server does"
        )
    server = LocalServer(settings)
    was_running = server.status().running
    started = time.monotonic()
    try:
        server.start(say)
        events = _prepare(connect, force)
        matcher = Matcher.of(p for event in events for p in event["prints"])
        server.stop(progress=say)
        before = _measure(server, settings, matcher)
        plan = plan_filler(before.free)
        say(f"writing filler: {plan.nodes} nodes, {plan.bytes / 2**20:.1f} MiB")
        server.start(say)
        with connect() as store:
            fill(store, plan, server.database_dirs(settings.neo4j_database)[1], say)
        server.stop(progress=say)
        after = _measure(server, settings, matcher)
    finally:
        _leave_as_found(server, was_running, say)
    return PurgeReport(
        erasing_events=len(events),
        fingerprints=len(matcher.prints),
        before=before,
        after=after,
        filler=plan,
        seconds=time.monotonic() - started,
    )


def _leave_as_found(server: LocalServer, was_running: bool, say: Say) -> None:
    """Running again if it was (also after a failure half way), stopped if it was not."""
    if was_running and not server.status().running:
        server.start(say)
    elif not was_running and server.status().running:
        server.stop(progress=say)


def _prepare(connect: Callable[[], Store], force: bool) -> list[dict[str, Any]]:
    """The erasing events' fingerprints; refuses while an event is open (the restarts
    would interrupt it, and an erasing event that has not completed has not erased)."""
    with connect() as store:
        open_events = store.read(OPEN_EVENTS)
        if open_events and not force:
            named = ", ".join(f"{e['ns']}/{e['id']} ({e['phase']})" for e in open_events[:5])
            raise InputError(
                f"{len(open_events)} repair events are open: {named}; finish them "
                "(`memorepair resume`) or pass --force to purge anyway"
            )
        clear_filler(store)
        return store.read(ERASURE_PRINTS)


def _measure(server: LocalServer, settings: Settings, matcher: Matcher) -> DiskState:
    """With the server stopped: erased text in its files, its log files, free records."""
    database, logs = server.database_dirs(settings.neo4j_database)
    return DiskState(
        scan=scan_files([server.home / "data", server.home / "logs"], matcher),
        tx_logs=sorted(p.name for p in logs.glob("neostore.transaction.db.*")),
        free=FreeRecords.of(database),
    )
