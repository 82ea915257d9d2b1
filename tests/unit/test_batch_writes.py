"""How a batch written in one transaction is cut into statements and built (no database):
the parts, the rows built a part ahead, the search fields of items without meta, and
redaction passed on from an earlier statement of the same transaction."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

import pytest

from memorepair import embedding, recording
from memorepair.errors import ConfigError, InputError
from memorepair.model import ArtifactIn, Kind
from memorepair.redaction import Erasing, _causes
from memorepair.settings import load_settings


def items(n: int, content: str = "x") -> list[ArtifactIn]:
    return [ArtifactIn(uid=f"a{i}", kind=Kind.RECORD, content=content) for i in range(n)]


@pytest.mark.parametrize("bad", ["0", "-1", "many"])
def test_import_tx_items_below_one_is_refused_naming_the_variable(
    monkeypatch: pytest.MonkeyPatch, bad: str
) -> None:
    monkeypatch.setenv("MEMOREPAIR_IMPORT_TX_ITEMS", bad)
    with pytest.raises(ConfigError, match="MEMOREPAIR_IMPORT_TX_ITEMS"):
        load_settings()


def test_import_tx_items_reaches_what_recording_writes_with(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert (
        load_settings().import_tx_items == recording.Writes.__dataclass_fields__["tx_items"].default
    )
    monkeypatch.setenv("MEMOREPAIR_IMPORT_TX_ITEMS", "7")
    assert load_settings().import_tx_items == 7


def test_parts_are_batch_sized_and_bounded_by_content_bytes() -> None:
    assert recording._parts(items(7), 3) == [3, 3, 1]
    assert recording._parts(items(1), 5000) == [1]
    half = recording.IMPORT_BATCH_BYTES // 2 + 1  # two of these exceed one part's bytes
    assert recording._parts(items(3, "y" * half), 5000) == [1, 1, 1]


def test_rows_ahead_yields_parts_in_order_each_built_after_the_one_before() -> None:
    built: list[str] = []
    threads: set[str] = set()

    def build(part: Sequence[ArtifactIn]) -> list[dict[str, Any]]:
        threads.add(threading.current_thread().name)
        built.extend(a.uid for a in part)  # what the next part's decisions read
        return [{"uid": a.uid, "seen": len(built)} for a in part]

    rows = list(recording._rows_ahead(build, items(5), [2, 2, 1]))
    assert [[r["uid"] for r in part] for part in rows] == [["a0", "a1"], ["a2", "a3"], ["a4"]]
    assert [part[-1]["seen"] for part in rows] == [2, 4, 5]
    assert len(threads) == 1 and threading.current_thread().name not in threads
    # one part: built on the caller's thread, no pool
    [single] = list(recording._rows_ahead(build, items(2), [2]))
    assert [r["uid"] for r in single] == ["a0", "a1"]


def test_rows_ahead_stops_building_when_the_writer_stops() -> None:
    started: list[int] = []
    gate, second = threading.Event(), threading.Event()

    def build(part: Sequence[ArtifactIn]) -> list[dict[str, Any]]:
        started.append(len(part))
        if len(started) > 1:  # the second part is being built when the writer stops
            second.set()
            gate.wait(timeout=10)
        return [{"uid": a.uid} for a in part]

    parts = recording._rows_ahead(build, items(40), [1] * 40)
    next(parts)
    assert second.wait(timeout=10)  # else close() could cancel it before it began
    release = threading.Timer(2.0, gate.set)  # after close() cancelled the parts not begun
    release.start()
    parts.close()  # the writer failed after the first part
    release.join()
    assert started == [1, 1]


def test_search_fields_of_items_without_meta_match_the_general_path() -> None:
    indexing = embedding.Indexing(meta_fields=("topic",))
    batch = [
        ArtifactIn(uid="plain", kind=Kind.RECORD, content="no meta"),
        ArtifactIn(uid="tagged", kind=Kind.RECORD, content="m", meta={"topic": "travel"}),
    ]
    fields = embedding.search_fields(indexing, batch, embed=False)
    general = embedding.searchable(indexing, embed=False)(
        [{"content": "no meta", "meta": None}, {"content": "m", "meta": '{"topic": "travel"}'}]
    )
    for uid, row in zip(["plain", "tagged"], general, strict=True):
        assert fields[uid] == {k: row[k] for k in fields[uid]}
    assert fields["tagged"]["meta_terms"] == ["topic=travel"]
    assert fields["plain"] == dict.fromkeys(
        ("meta_terms", "embedding", "embedding_model", "embedding_dim")
    )


def late(uid: str, inputs: list[str]) -> dict[str, Any]:
    return {
        "uid": uid,
        "live": False,
        "inputs": inputs,
        "input_vids": [f"ns/{u}@1" for u in inputs],
    }


def test_redaction_passes_on_from_an_earlier_statement_of_the_transaction() -> None:
    cause = Erasing("passport@1", "ns/gdpr-1")
    earlier = {"copy": cause}  # redacted in an earlier part of the same transaction
    found = _causes([late("derived", ["copy"]), late("other", ["x"])], {}, dict(earlier), False)
    assert found == {"derived": cause}
    chained = _causes([late("d1", ["copy"]), late("d2", ["d1"])], {}, dict(earlier), refuse=False)
    assert chained == {"d1": cause, "d2": cause}
    with pytest.raises(InputError, match="passport@1 is erased by event 'gdpr-1'"):
        _causes([late("derived", ["copy"])], {}, dict(earlier), refuse=True)
