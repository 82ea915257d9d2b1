"""Use recording: what serving reads served, counted per artifact identity.

A read calls `UseRecorder.note(ns, uids)` with the uids it returned; that only updates
an in-memory buffer (a dict under a lock), so the read's latency does not include a
write. A background thread writes the buffer to Neo4j every `MEMOREPAIR_USE_FLUSH_S`
seconds (and `close` writes what is left), one `serving/usage/record_use` statement per
namespace: per uid a count, the last time it was served and a decayed frequency, where
a use `a` seconds old weighs `2^(-a / half-life)` (`MEMOREPAIR_VALUE_HALF_LIFE_H`). The
buffer keeps the same decayed sum, so a flush adds exactly what the reads would have
added one by one. `values.py` turns the record into the default value w.

The same reads also say who was served which version (exposure): per version, principal
and session (an MCP session, a LangGraph thread) a count and the first and last time,
one `serving/usage/record_exposure` statement per namespace at the same flush. After an
event, `audit exposure` lists who read each version it withdrew (`audit.py`). Records
whose last read is older than MEMOREPAIR_EXPOSURE_RETENTION_DAYS are deleted by a flush
that wrote exposure records, at most every ten minutes per process.

Usage and exposure records hold identities, counts and times, never content: erasure has
nothing to scrub in them, and clearing a namespace removes them. `MEMOREPAIR_USE_RECORDING
=false` stops the counts, `MEMOREPAIR_EXPOSURE_RECORDING=false` the exposure records. A
read is written within MEMOREPAIR_USE_FLUSH_S, or at `close`; a process killed before
that loses its last reads (a repair flushes its own process's reads before its barrier).
A failed flush fails no read: it is logged, and the rows it could not write are kept and
written first by the next flush (both queries add row by row, so a kept row and a fresh
one of the same key both count), so a database that is briefly unreachable costs the
audit no exposure record; beyond MAX_CARRIED kept rows the oldest are dropped, logged as
an error with their number.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from memorepair import queries
from memorepair.model import artifact_key, version_id
from memorepair.store import Store

RECORD_USE = queries.named("serving/usage/record_use")
RECORD_EXPOSURE = queries.named("serving/usage/record_exposure")
EXPIRE_EXPOSURE = queries.named("serving/usage/expire_exposure")

log = logging.getLogger(__name__)

#: Buffered identities above which the flusher is woken early (bounded memory).
MAX_PENDING = 50_000
#: Seconds between two deletions of exposure records past their retention.
EXPIRE_EVERY_S = 600.0
#: Exposure records deleted per statement (the flusher loops until none are left).
EXPIRE_BATCH = 10_000
#: Rows kept from failed flushes, at most (beyond it the oldest are dropped, loudly).
MAX_CARRIED = 1_000_000


@dataclass
class Pending:
    """The buffered use of one identity: reads since the last flush, the latest read's
    time (epoch seconds) and the decayed sum of the reads at that time."""

    count: int
    at: float
    freq: float

    def add(self, at: float, half_life_s: float) -> None:
        if at >= self.at:
            self.freq = self.freq * decay(at - self.at, half_life_s) + 1.0
            self.at = at
        else:  # a clock step back: count the read at the stored time
            self.freq += decay(self.at - at, half_life_s)
        self.count += 1


@dataclass
class Seen:
    """One version served to one principal in one session since the last flush: reads,
    and the first and last read's time (epoch seconds)."""

    count: int
    first: float
    last: float

    def add(self, at: float) -> None:
        self.count += 1
        self.first = min(self.first, at)
        self.last = max(self.last, at)


#: Who was served: (principal, session or None).
Reader = tuple[str, str | None]
#: What exposure records key on: (uid, version, principal, session).
Exposed = tuple[str, int, str, str | None]


def decay(age_s: float, half_life_s: float) -> float:
    """The weight of a use `age_s` seconds old: 1 now, 1/2 after one half-life."""
    return float(2.0 ** (-max(age_s, 0.0) / half_life_s))


class UseRecorder:
    """Buffers served uids per namespace and flushes them in the background."""

    def __init__(
        self,
        store: Store,
        *,
        enabled: bool,
        flush_s: float,
        half_life_s: float,
        exposure: bool = True,
        retention_s: float | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.store = store
        self.enabled = enabled
        #: Whether reads also record who was served which version (audit exposure).
        self.exposure = exposure
        #: Exposure records whose last read is older are deleted (None: kept).
        self.retention_s = retention_s
        self._expired_at = 0.0
        self._exposed: dict[str, dict[Exposed, Seen]] = {}
        self.flush_s = flush_s
        self.half_life_s = half_life_s
        self._clock = clock
        self._lock = threading.Lock()
        self._pending: dict[str, dict[str, Pending]] = {}
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        #: Flushes that wrote something, identities written, seconds spent (benchmarks).
        self.stats = {"flushes": 0, "identities": 0, "seconds": 0.0}
        #: Rows not written yet, per (query, namespace): what failed flushes left.
        self._carried: dict[tuple[str, str], list[dict[str, object]]] = {}
        #: One flush at a time (the flusher thread, a repair's, `close`): they share those.
        self._flushing = threading.Lock()

    def note(
        self,
        ns: str,
        served: Iterable[tuple[str, int]],
        reader: Reader | None = None,
        *,
        use: bool = True,
    ) -> None:
        """Count one use of each (uid, version) a read returned, and that `reader` was
        served it; `use=False` records the exposure only (an export is not a use)."""
        counting = self.enabled and use
        exposing = self.exposure and reader is not None
        if not counting and not exposing:
            return
        at = self._clock()
        with self._lock:
            uses = self._pending.setdefault(ns, {})
            exposed = self._exposed.setdefault(ns, {})
            for uid, version in served:
                if counting:
                    seen = uses.get(uid)
                    if seen is None:
                        uses[uid] = Pending(1, at, 1.0)
                    else:
                        seen.add(at, self.half_life_s)
                if exposing and reader is not None:
                    key = (uid, int(version), *reader)
                    found = exposed.get(key)
                    if found is None:
                        exposed[key] = Seen(1, at, at)
                    else:
                        found.add(at)
            size = sum(len(b) for b in self._pending.values())
            size += sum(len(b) for b in self._exposed.values())
            self._start()
        if size >= MAX_PENDING:
            self._wake.set()

    def flush(self) -> int:
        """Write everything buffered now (and what failed flushes left); the number of
        identities whose use was counted (exposure records are written too, and expired
        ones deleted when due)."""
        with self._flushing:
            return self._flush()

    def _flush(self) -> int:
        with self._lock:
            pending, self._pending = self._pending, {}
            exposed, self._exposed = self._exposed, {}
        for ns, seen in exposed.items():
            self._carry("exposure", ns, exposure_rows(ns, seen))
        for ns, uses in pending.items():
            self._carry(
                "use",
                ns,
                [
                    {"key": artifact_key(ns, uid), "uid": uid, **vars(p)}
                    for uid, p in sorted(uses.items())
                ],
            )
        if self._write("exposure"):
            self._expire()
        started = time.perf_counter()
        written = self._write("use")
        if written:
            self.stats["flushes"] += 1
            self.stats["identities"] += written
            self.stats["seconds"] += time.perf_counter() - started
        return written

    def _carry(self, what: str, ns: str, rows: list[dict[str, object]]) -> None:
        kept = self._carried.setdefault((what, ns), [])
        kept += rows
        over = sum(len(r) for r in self._carried.values()) - MAX_CARRIED
        if over > 0:
            dropped = min(over, len(kept))
            del kept[:dropped]
            log.error(
                "use recording: %d %s rows of %s dropped (unwritten too long)", dropped, what, ns
            )

    def _write(self, what: str) -> int:
        """Write the kept rows of one query, batch by batch; a failure keeps the rest."""
        written = 0
        for key in [k for k in self._carried if k[0] == what]:
            ns, rows = key[1], self._carried[key]
            while rows:
                batch = rows[: self.store.batch_size]
                if what == "use":
                    now = self._clock()
                    self.store.write_unindexed(
                        RECORD_USE, ns=ns, rows=batch, half_life_s=self.half_life_s, now=now
                    )
                else:
                    self.store.write_unindexed(RECORD_EXPOSURE, ns=ns, rows=batch)
                del rows[: len(batch)]
                written += len(batch)
            del self._carried[key]
        return written

    def _expire(self) -> None:
        """Delete exposure records past their retention (at most every EXPIRE_EVERY_S), in
        every namespace: whichever process reads also keeps the records bounded."""
        now = self._clock()
        if self.retention_s is None or now - self._expired_at < EXPIRE_EVERY_S:
            return
        self._expired_at = now
        while True:
            (row,) = self.store.write_unindexed(
                EXPIRE_EXPOSURE, before=now - self.retention_s, limit=EXPIRE_BATCH
            )
            if row["expired"] < EXPIRE_BATCH:
                return

    def close(self) -> None:
        """Stop the flusher and write what is left (the store's close calls this)."""
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        self.flush_safely()

    def _start(self) -> None:
        """The flusher thread, started with the first use (called under the lock)."""
        if self._thread is None and not self._stop.is_set():
            self._thread = threading.Thread(
                target=self._run, name="memorepair-use-flush", daemon=True
            )
            self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            self._wake.wait(self.flush_s)
            self._wake.clear()
            if not self._stop.is_set():
                self.flush_safely()

    def flush_safely(self) -> None:
        try:
            self.flush()
        except Exception as exc:  # never let bookkeeping break or slow a read
            log.warning("use recording: a flush failed; its rows are kept for the next: %s", exc)


def exposure_rows(ns: str, seen: dict[Exposed, Seen]) -> list[dict[str, object]]:
    """The rows of `serving/usage/record_exposure` for one namespace's buffer."""
    return [
        {
            "key": exposure_key(ns, uid, version, principal, session),
            "vid": version_id(ns, uid, version),
            "uid": uid,
            "version": version,
            "principal": principal,
            "session": session,
            **vars(found),
        }
        for (uid, version, principal, session), found in sorted(
            seen.items(), key=lambda item: (*item[0][:3], item[0][3] or "")
        )
    ]


def exposure_key(ns: str, uid: str, version: int, principal: str, session: str | None) -> str:
    """The key of one exposure record: a version, a principal and a session (newlines
    appear in none of the three)."""
    return f"{version_id(ns, uid, version)}\n{principal}\n{session or ''}"
