"""WriteBehind: staging writes overlap the builds, with a bounded number in flight.

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


def writer(store: RecordingStore, in_flight: int = 2, batch_size: int = 1) -> WriteBehind:
    return WriteBehind(
        cast(Store, store),
        "execution/stage_successors",
        batch_size=batch_size,
        in_flight=in_flight,
        event_key="ns/ev",
    )


@pytest.mark.parametrize("in_flight", [1, 2, 3])
def test_every_batch_is_written_with_at_most_in_flight_at_once(in_flight: int) -> None:
    store = RecordingStore(delay=0.02)
    with writer(store, in_flight) as w:
        for batch in range(8):
            w.add(batch)
    assert sorted(params["rows"][0] for _, params in store.calls) == list(range(8))
    assert all(p["event_key"] == "ns/ev" for _, p in store.calls)
    assert store.max_active == in_flight


def test_one_in_flight_keeps_submission_order() -> None:
    store = RecordingStore(delay=0.01)
    with writer(store, 1) as w:
        for batch in range(6):
            w.add(batch)
    assert [params["rows"] for _, params in store.calls] == [[b] for b in range(6)]


def test_add_returns_while_the_batch_is_still_being_written() -> None:
    store = RecordingStore()
    store.release.clear()  # the server "works" until the caller says so
    with writer(store) as w:
        assert w.add(0)  # a full batch (of one) was handed over
        assert store.calls == []  # the caller is free to build the next batch meanwhile
        store.release.set()
    assert [p["rows"] for _, p in store.calls] == [[0]]


def test_a_failed_batch_stops_the_caller_within_in_flight_batches() -> None:
    store = RecordingStore(fail_on=1)
    submitted: list[int] = []
    with pytest.raises(RuntimeError, match="batch 1 refused"), writer(store) as w:
        for batch in range(10):
            w.add(batch)
            submitted.append(batch)
    assert submitted == [0, 1, 2]  # adding batch 3 waited for batch 1 and raised
    assert sorted(p["rows"][0] for _, p in store.calls) == [0, 2]


def test_a_failed_last_batch_is_raised_when_the_block_ends() -> None:
    store = RecordingStore(fail_on=2)
    with pytest.raises(RuntimeError, match="batch 2 refused"), writer(store) as w:
        for batch in range(3):
            w.add(batch)


def test_the_callers_error_wins_and_the_write_in_flight_still_ends() -> None:
    store = RecordingStore(delay=0.1)
    with pytest.raises(KeyError), writer(store) as w:
        w.add(0)
        raise KeyError("operator bug")
    assert store.active == 0
    assert [p["rows"] for _, p in store.calls] == [[0]]


def test_rows_are_batched_and_the_partial_last_batch_is_written_at_block_end() -> None:
    store = RecordingStore()
    handed_over = []
    with writer(store, in_flight=1, batch_size=3) as w:
        for row in range(7):
            handed_over.append(w.add(row))
    assert handed_over == [False, False, True, False, False, True, False]
    assert [p["rows"] for _, p in store.calls] == [[0, 1, 2], [3, 4, 5], [6]]


def test_after_the_callers_error_a_partial_batch_is_not_written() -> None:
    store = RecordingStore()
    with pytest.raises(KeyError), writer(store, batch_size=3) as w:
        w.add(0)
        raise KeyError("operator bug")
    assert store.calls == []
