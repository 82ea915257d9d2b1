"""Use recording: what serving reads served, counted per artifact identity.

A read calls `UseRecorder.note(ns, uids)` with the uids it returned; that only updates
an in-memory buffer (a dict under a lock), so the read's latency does not include a
write. A background thread writes the buffer to Neo4j every `MEMOREPAIR_USE_FLUSH_S`
seconds (and `close` writes what is left), one `serving/usage/record_use` statement per
namespace: per uid a count, the last time it was served and a decayed frequency, where
a use `a` seconds old weighs `2^(-a / half-life)` (`MEMOREPAIR_VALUE_HALF_LIFE_H`). The
buffer keeps the same decayed sum, so a flush adds exactly what the reads would have
added one by one. `values.py` turns the record into the default value w.

Usage records hold identities, counts and times, never content: erasure has nothing to
scrub in them. `MEMOREPAIR_USE_RECORDING=false` makes `note` a no-op (nothing written).
A failed flush is logged and dropped: use counts steer repair priorities, they are not
worth failing or slowing a read for.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from memorepair import queries
from memorepair.model import artifact_key
from memorepair.store import Store

RECORD_USE = queries.named("serving/usage/record_use")

log = logging.getLogger(__name__)

#: Buffered identities above which the flusher is woken early (bounded memory).
MAX_PENDING = 50_000


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
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.store = store
        self.enabled = enabled
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

    def note(self, ns: str, uids: Iterable[str]) -> None:
        """Count one use of each uid a read returned (a no-op when recording is off)."""
        if not self.enabled:
            return
        at = self._clock()
        with self._lock:
            buffer = self._pending.setdefault(ns, {})
            for uid in uids:
                seen = buffer.get(uid)
                if seen is None:
                    buffer[uid] = Pending(1, at, 1.0)
                else:
                    seen.add(at, self.half_life_s)
            size = sum(len(b) for b in self._pending.values())
            self._start()
        if size >= MAX_PENDING:
            self._wake.set()

    def flush(self) -> int:
        """Write everything buffered now; the number of identities written."""
        with self._lock:
            pending, self._pending = self._pending, {}
        started = time.perf_counter()
        written = 0
        for ns, buffer in pending.items():
            rows = [
                {"key": artifact_key(ns, uid), "uid": uid, **vars(p)}
                for uid, p in sorted(buffer.items())
            ]
            for batch in self.store.batched(rows):
                self.store.write(
                    RECORD_USE, ns=ns, rows=batch, half_life_s=self.half_life_s, now=self._clock()
                )
                written += len(batch)
        if written:
            self.stats["flushes"] += 1
            self.stats["identities"] += written
            self.stats["seconds"] += time.perf_counter() - started
        return written

    def close(self) -> None:
        """Stop the flusher and write what is left (the store's close calls this)."""
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        self._safe_flush()

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
                self._safe_flush()

    def _safe_flush(self) -> None:
        try:
            self.flush()
        except Exception as exc:  # never let bookkeeping break or slow a read
            log.warning("use recording: a flush failed and was dropped: %s", exc)
