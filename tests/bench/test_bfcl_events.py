"""Seeded events over the BFCL memory reference existing uids and really change things."""

from __future__ import annotations

import pytest

pytest.importorskip(
    "bfcl_eval", reason="bench extra not installed (pip install --no-deps bfcl-eval)"
)
pytest.importorskip("mpmath", reason="bench extra not installed (mpmath, used by MathAPI)")

from bench.bfcl.backends import MigratedBackend, ToolCallError
from bench.bfcl.builder import as_support, build_memory, make_backends
from bench.bfcl.events import dump_events, generate_events, timeline_events
from bench.bfcl.executors import build_cache_content

from memorepair.model import EventType, Kind


@pytest.fixture(scope="module")
def setup():  # type: ignore[no-untyped-def]
    memory = build_memory(24)
    return memory, generate_events(memory, seed=3, per_type=3)


def test_events_are_seeded_and_valid(setup) -> None:  # type: ignore[no-untyped-def]
    memory, events = setup
    assert dump_events(generate_events(memory, seed=3, per_type=3)) == dump_events(events)
    uids = memory.by_uid()
    for t in EventType:
        assert sum(e.spec.type is t for e in events) == 3
    for e in events:
        assert all(r in uids for r in e.spec.roots)


def test_corrections_change_the_replayed_output(setup) -> None:  # type: ignore[no-untyped-def]
    memory, events = setup
    by_uid = memory.by_uid()
    backends = make_backends(memory.tasks)
    for e in (e for e in events if e.spec.type is EventType.CORRECT):
        (replacement,) = e.spec.replacements
        cache = next(
            a
            for a in memory.artifacts
            if a.kind is Kind.CACHE and a.inputs[0] == replacement.replaces
        )
        support = [as_support(by_uid[u]) for u in cache.inputs]
        support[0] = as_support(
            by_uid[replacement.replaces].model_copy(update={"content": replacement.content}), 2
        )
        assert cache.recipe is not None
        try:
            out = build_cache_content(support, cache.recipe.args, None, backends)
        except ToolCallError:
            continue
        assert out != cache.content


def test_migrations_break_old_calls_and_replay_under_the_new_interface(setup) -> None:  # type: ignore[no-untyped-def]
    memory, events = setup
    by_uid = memory.by_uid()
    for e in (e for e in events if e.spec.type is EventType.MIGRATE):
        m = e.migration
        assert m is not None and e.spec.interface is not None
        backends = dict(make_backends(memory.tasks))
        backends[m.tool] = MigratedBackend(backends[m.tool], m)  # type: ignore[assignment]
        hit = [
            c
            for c in memory.artifacts
            if c.kind is Kind.CACHE
            and c.meta["tool"] == m.tool
            and by_uid[c.inputs[0]].meta["call"]["function"] == m.function
            and (m.param is None or m.param in by_uid[c.inputs[0]].meta["call"]["args"])
        ]
        assert hit, e.spec.id
        for c in hit:
            assert c.recipe is not None
            support = [as_support(by_uid[u]) for u in c.inputs]
            with pytest.raises(ToolCallError):
                build_cache_content(support, c.recipe.args, None, backends)
            assert (
                build_cache_content(support, c.recipe.args, e.spec.interface, backends) == c.content
            )


def test_timeline_events_stay_valid_in_sequence() -> None:
    memory = build_memory(48)
    rounds = timeline_events(memory, seed=7, first=1, per_type=2, rounds=2)
    assert [len(r) for r in rounds] == [3, 6, 6]
    assert rounds == timeline_events(memory, seed=7, first=1, per_type=2, rounds=2)
    roots = [root for r in rounds for e in r for root in e.spec.roots]
    assert len(roots) == len(set(roots))  # no root twice
    migrated: set[str] = set()
    by_uid = memory.by_uid()
    for r, events in enumerate(rounds):
        assert [e.spec.id.split("-")[1] for e in events] == [f"r{r}"] * len(events)
        kinds = [e.spec.type for e in events]
        assert kinds == sorted(
            kinds, key=[EventType.DELETE, EventType.CORRECT, EventType.MIGRATE].index
        )
        for e in events:
            call = by_uid[e.spec.roots[0]].meta.get("call")
            if e.spec.type is not EventType.MIGRATE and call is not None:
                tool = by_uid[e.spec.roots[0]].meta["tool"]
                assert tool not in migrated, (e.spec.id, tool)  # not after its migration
        for e in events:
            if e.migration is not None:
                assert e.migration.tool not in migrated  # each tool migrated once
                migrated.add(e.migration.tool)
