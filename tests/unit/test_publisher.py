"""The repair's writer schedules its batches (no database): two independent batches are
written at once, one in each stripe of the publication lock; a batch that reads or
requires what a batch in flight holds waits for its commit; a paced repair, or one writer,
writes one batch at a time. The locking itself is tested against the real Neo4j
(tests/integration/test_concurrency.py)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest

from memorepair import publication
from memorepair.candidates import Candidate
from memorepair.errors import ConfigError
from memorepair.execution import Attempt
from memorepair.model import Mode, RepairEventSpec
from memorepair.operators.base import Successor
from memorepair.publication import Publisher
from memorepair.settings import RepairConfig, load_settings
from memorepair.store import ramped

#: How long a transaction waits for the other batch to start before ending without it: a
#: bound on a wait, never a measured figure.
OVERLAP_WAIT_S = 5.0


class _Store:
    """Stands in for `Store`: each transaction logs its start and end and, for the first
    batch, waits (bounded) for the second to start, so the log shows whether they overlap."""

    batch_size = 2

    def __init__(self, wait_s: float = OVERLAP_WAIT_S) -> None:
        self.log: list[tuple[str, str, int]] = []  # (start|end, first uid, stripe)
        self._second = threading.Event()
        self._wait_s = wait_s
        self._mutex = threading.Lock()

    def transaction(self, work: Callable[..., Any]) -> tuple[list[Attempt], dict[str, Any]]:
        keywords = getattr(work, "keywords", {})
        first = keywords["prepared"].batch[0].candidate.uid
        with self._mutex:
            self.log.append(("start", first, keywords["stripe"]))
        if len([e for e in self.log if e[0] == "start"]) == 1:
            self._second.wait(self._wait_s)
        else:
            self._second.set()
        with self._mutex:
            self.log.append(("end", first, keywords["stripe"]))
        return [], {}


def _attempt(uid: str, requires: tuple[str, ...] = ()) -> Attempt:
    candidate = Candidate(uid, f"t/{uid}@1", Mode.RECOMPUTE, "op", True, "", 1.0, 1.0, requires)
    return Attempt(candidate, f"t/{uid}@2", None, None, validated=False)


def _run(store: _Store, attempts: list[Attempt], **options: Any) -> Publisher:
    spec = RepairEventSpec(id="e1", type="delete", roots=["root"], ns="t")
    writer = Publisher(
        store,  # type: ignore[arg-type]
        spec,
        prepare=lambda rows: rows,
        checkpoint=lambda point: None,
        backlog=None,
        **options,
    )
    with writer:
        for attempt in attempts:
            writer.add(attempt)
    return writer


def _order(store: _Store) -> list[str]:
    return [f"{kind} {uid}" for kind, uid, _ in store.log]


def test_two_independent_batches_are_written_at_once_in_different_stripes() -> None:
    store = _Store()
    _run(store, [_attempt("a1"), _attempt("a2"), _attempt("b1"), _attempt("b2")], writers=2)
    assert _order(store) == ["start a1", "start b1", "end b1", "end a1"]
    assert {stripe for _, _, stripe in store.log} == {0, 1}


def test_a_batch_requiring_one_in_flight_waits_for_its_commit() -> None:
    store = _Store(wait_s=0.5)
    attempts = [_attempt("a1"), _attempt("a2"), _attempt("b1", ("a2",)), _attempt("b2")]
    _run(store, attempts, writers=2)
    assert _order(store) == ["start a1", "end a1", "start b1", "end b1"]


@pytest.mark.parametrize("options", [{"writers": 1}, {"writers": 2, "pace": 0.99}])
def test_one_writer_or_a_paced_repair_writes_one_batch_at_a_time(options: dict[str, Any]) -> None:
    store = _Store(wait_s=0.5)
    _run(store, [_attempt("a1"), _attempt("a2"), _attempt("b1"), _attempt("b2")], **options)
    assert _order(store) == ["start a1", "end a1", "start b1", "end b1"]
    assert {stripe for _, _, stripe in store.log} == {0}


def test_a_writers_error_reaches_the_caller_after_the_other_batch_ends() -> None:
    class Failing(_Store):
        def transaction(self, work: Callable[..., Any]) -> tuple[list[Attempt], dict[str, Any]]:
            result = super().transaction(work)
            if work.keywords["prepared"].batch[0].candidate.uid == "a1":  # type: ignore[attr-defined]
                raise RuntimeError("server gone")
            return result

    store = Failing()
    with pytest.raises(RuntimeError, match="server gone"):
        _run(store, [_attempt(u) for u in ("a1", "a2", "b1", "b2", "c1", "c2")], writers=2)
    assert ("end", "b1", 1) in store.log  # the batch beside it was not abandoned
    assert not any(uid == "c1" for _, uid, _ in store.log)  # nothing after the error


@pytest.mark.parametrize("bad", ["0", "3", "-1", "two"])
def test_writers_outside_1_to_2_are_refused_naming_the_variable(
    monkeypatch: pytest.MonkeyPatch, bad: str
) -> None:
    monkeypatch.setenv("MEMOREPAIR_REPAIR_WRITERS", bad)
    with pytest.raises(ConfigError, match="MEMOREPAIR_REPAIR_WRITERS"):
        load_settings()


def test_the_writers_reach_the_repair_config(monkeypatch: pytest.MonkeyPatch) -> None:
    assert RepairConfig.from_settings(load_settings()).writers == 2
    monkeypatch.setenv("MEMOREPAIR_REPAIR_WRITERS", "1")
    assert RepairConfig.from_settings(load_settings()).writers == 1


def _sized(uid: str, size: int) -> Attempt:
    candidate = Candidate(uid, f"t/{uid}@1", Mode.RECOMPUTE, "op", True, "", 1.0, 1.0, ())
    successor = Successor(content="é" * (size // 2), inputs=())  # 2 bytes a character
    return Attempt(candidate, f"t/{uid}@2", successor, None, validated=False, staged=True)


def test_a_batch_also_closes_at_its_successors_content_bytes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(publication, "TX_BYTES", 100)
    store = _Store(wait_s=0.0)
    store.batch_size = 10  # rows alone would make one batch
    _run(store, [_sized("a", 60), _sized("b", 60), _sized("c", 10), _sized("d", 10)], writers=1)
    assert [uid for kind, uid, _ in store.log if kind == "start"] == ["a", "c"]


@pytest.mark.parametrize("bad", ["0", "100001", "many"])
def test_a_repair_batch_outside_1_to_100000_is_refused_naming_the_variable(
    monkeypatch: pytest.MonkeyPatch, bad: str
) -> None:
    monkeypatch.setenv("MEMOREPAIR_REPAIR_BATCH", bad)
    with pytest.raises(ConfigError, match="MEMOREPAIR_REPAIR_BATCH"):
        load_settings()


def test_the_repair_batch_reaches_the_repair_config_apart_from_the_batch_size(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("MEMOREPAIR_BATCH_SIZE", "300")
    assert RepairConfig.from_settings(load_settings()).batch == 20_000
    monkeypatch.setenv("MEMOREPAIR_REPAIR_BATCH", "7")
    assert RepairConfig.from_settings(load_settings()).batch == 7


def test_batches_double_from_the_first_up_to_the_batch_size(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(publication, "RAMP_FIRST", 1)
    store = _Store(wait_s=0.0)
    store.batch_size = 4
    _run(store, [_attempt(f"u{i:02d}") for i in range(15)], writers=1)
    starts = [uid for kind, uid, _ in store.log if kind == "start"]
    assert starts == ["u00", "u01", "u03", "u07", "u11"]  # 1, 2, 4, 4, then the last 4


def test_ramped_chunks_grow_to_the_size_and_keep_every_value_once() -> None:
    chunks = list(ramped(list(range(20)), 5, first=2))
    assert [len(c) for c in chunks] == [2, 4, 5, 5, 4]
    assert [v for c in chunks for v in c] == list(range(20))
    assert [len(c) for c in ramped(list(range(3)), 2, first=8)] == [2, 1]
