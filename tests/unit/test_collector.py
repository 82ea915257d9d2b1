"""The collector pause of repairs and imports: nested across threads, never leaves the
collector off, and never turns on a collector its caller had turned off."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator

import pytest

from memorepair.graphs import collector_paused


@pytest.fixture(autouse=True)
def _restore_collector() -> Iterator[None]:
    was = gc.isenabled()
    yield
    if was:
        gc.enable()
    else:
        gc.disable()


def test_overlapping_pauses_resume_when_the_last_one_ends() -> None:
    gc.enable()
    first_in, second_in, first_out = threading.Event(), threading.Event(), threading.Event()
    seen: dict[str, bool] = {}

    def first() -> None:
        with collector_paused():
            first_in.set()
            second_in.wait(5)
        first_out.set()

    def second() -> None:
        first_in.wait(5)
        with collector_paused():
            second_in.set()
            first_out.wait(5)
            seen["after the first ended"] = gc.isenabled()

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert seen == {"after the first ended": False}
    assert gc.isenabled()


def test_a_pause_resumes_the_collector_after_an_error() -> None:
    gc.enable()
    with pytest.raises(RuntimeError), collector_paused():
        assert not gc.isenabled()
        raise RuntimeError("boom")
    assert gc.isenabled()


def test_a_collector_turned_off_by_the_caller_stays_off() -> None:
    gc.disable()
    with collector_paused():
        pass
    assert not gc.isenabled()


def test_as_a_decorator_each_call_pauses_and_resumes() -> None:
    gc.enable()
    seen: list[bool] = []

    @collector_paused()
    def call() -> None:
        seen.append(gc.isenabled())

    call()
    call()  # a second call gets a pause of its own, not the spent first one
    assert seen == [False, False]
    assert gc.isenabled()
