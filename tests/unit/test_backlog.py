"""The embedding backlog's hold (no database): a repair holds its successors' vectors
until its writes end, so a cascade larger than the old 50,000-version cap no longer
starts the vector writer, and stalls the repair's `add`, halfway through; a backlog over
its content cap still writes while held (bounded memory). The writes themselves are
tested against the real Neo4j (tests/integration/test_repair_window.py)."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from memorepair import embedding
from memorepair.embedding import EmbeddingBacklog, Pending

#: A bound on how long a test waits for the writer to start: never a measured figure.
WAIT_S = 5.0
#: How long the writer is given to start when it must not: a stalled writer shows long
#: before it (the writer starts within BACKLOG_LINGER_S of being free to).
GRACE_S = 0.5


class _Backlog(EmbeddingBacklog):
    """A backlog whose writes only log their size (the store and embedder are unused)."""

    def __init__(self, batch_size: int = 10_000) -> None:
        super().__init__(store=Any, embedder=Any, batch_size=batch_size)  # type: ignore[arg-type]
        self.written: list[int] = []
        self.started = threading.Event()

    def _write(self, batch: list[Pending]) -> None:
        self.started.set()
        self.written.append(len(batch))


def _pending(n: int, content: str = "x") -> list[Pending]:
    return [Pending("t", f"t/u{i}@2", content, reuse=True) for i in range(n)]


def test_a_held_backlog_keeps_a_large_cascade_until_the_hold_ends() -> None:
    backlog = _Backlog()
    try:
        with backlog.held():
            backlog.add(_pending(60_000))  # more than the old cap: add must not stall
            assert not backlog.started.wait(GRACE_S)
            assert backlog.pending == 60_000
        backlog.flush()
        assert sum(backlog.written) == 60_000
    finally:
        backlog.close()


def test_a_held_backlog_over_its_content_cap_writes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(embedding, "BACKLOG_MAX_CHARS", 1_000)
    backlog = _Backlog()
    try:
        with backlog.held():
            backlog.add(_pending(20, "y" * 100))  # 2,000 characters queued
            assert backlog.started.wait(WAIT_S)
        backlog.flush()
        assert sum(backlog.written) == 20
    finally:
        backlog.close()


def test_add_waits_while_the_backlog_is_full(monkeypatch: pytest.MonkeyPatch) -> None:
    """Beyond the cap `add` waits for the writer (it does not queue without bound)."""
    monkeypatch.setattr(embedding, "BACKLOG_MAX", 10)
    backlog = _Backlog(batch_size=1)  # the writer takes one version, then waits at the gate
    gate = threading.Event()
    write = backlog._write

    def slow(batch: list[Pending]) -> None:
        gate.wait(WAIT_S)
        write(batch)

    backlog._write = slow  # type: ignore[method-assign]
    added = threading.Event()
    try:
        backlog.add(_pending(10))
        backlog.add(_pending(5))  # at least 9 queued: below the cap when it checked
        third = threading.Thread(target=lambda: (backlog.add(_pending(1)), added.set()))
        third.start()
        assert not added.wait(GRACE_S)  # 14 or more queued: full
        gate.set()
        assert added.wait(WAIT_S)
        third.join(WAIT_S)
        backlog.flush()
        assert sum(backlog.written) == 16
    finally:
        gate.set()
        backlog.close()
