"""WriteBehind: staging writes overlap the builds, in order, one batch in flight.

The store here only records calls (the helper's contract is threading and error flow;
what the writes do is covered against the real server by the repair tests).
"""

from __future__ import annotations

import threading
import time
from typing import Any, cast

import pytest

from memorepair.store import Store, WriteBehind


class RecordingStore:
    def __init__(self, *, delay: float = 0.0, fail_on: int | None = None) -> None:
        self.delay = delay
        self.fail_on = fail_on
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.active = 0
        self.max_active = 0
        self.release = threading.Event()
        self.release.set()
        self._lock = threading.Lock()

    def write(self, name: str, **params: Any) -> list[dict[str, Any]]:
        with self._lock:
            self.active += 1
            self.max_active = max(self.max_active, self.active)
        try:
            assert self.release.wait(5)
            time.sleep(self.delay)
            if self.fail_on is not None and params["rows"] == [self.fail_on]:
                raise RuntimeError(f"batch {self.fail_on} refused")
            self.calls.append((name, params))
            return []
        finally:
            with self._lock:
                self.active -= 1


def writer(store: RecordingStore) -> WriteBehind:
    return WriteBehind(cast(Store, store), "execution/stage_successors", event_key="ns/ev")


def test_batches_commit_in_submission_order_one_at_a_time() -> None:
    store = RecordingStore(delay=0.02)
    with writer(store) as w:
        for batch in range(6):
            w.submit(rows=[batch])
    assert [params["rows"] for _, params in store.calls] == [[b] for b in range(6)]
    assert all(p["event_key"] == "ns/ev" for _, p in store.calls)
    assert store.max_active == 1


def test_submit_returns_while_the_batch_is_still_being_written() -> None:
    store = RecordingStore()
    store.release.clear()  # the server "works" until the caller says so
    with writer(store) as w:
        w.submit(rows=[0])
        assert store.calls == []  # the caller is free to build the next batch meanwhile
        store.release.set()
    assert [p["rows"] for _, p in store.calls] == [[0]]


def test_a_failed_batch_stops_the_caller_at_its_next_submit() -> None:
    store = RecordingStore(fail_on=1)
    with pytest.raises(RuntimeError, match="batch 1 refused"), writer(store) as w:
        for batch in range(5):
            w.submit(rows=[batch])
    assert [p["rows"] for _, p in store.calls] == [[0]]  # nothing after the failure


def test_a_failed_last_batch_is_raised_when_the_block_ends() -> None:
    store = RecordingStore(fail_on=2)
    with pytest.raises(RuntimeError, match="batch 2 refused"), writer(store) as w:
        for batch in range(3):
            w.submit(rows=[batch])


def test_the_callers_error_wins_and_the_write_in_flight_still_ends() -> None:
    store = RecordingStore(delay=0.1)
    with pytest.raises(KeyError), writer(store) as w:
        w.submit(rows=[0])
        raise KeyError("operator bug")
    assert store.active == 0
    assert [p["rows"] for _, p in store.calls] == [[0]]
