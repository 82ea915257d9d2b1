"""The purge's pure parts: how much filler a store calls for, and the file scan that
looks for erased text (by fingerprint) in binary files."""

from __future__ import annotations

from pathlib import Path

import pytest

from memorepair.api import purge_local_server
from memorepair.errors import ConfigError
from memorepair.fingerprints import Matcher, fingerprints
from memorepair.local import store_files
from memorepair.local.purge import (
    DYNAMIC_DATA,
    DYNAMIC_PER_PAGE,
    FILL_RECORDS,
    LIST_HEADER,
    FillerPlan,
    last_log_version,
    plan_filler,
    scan_files,
)
from memorepair.local.store_files import (
    PAGE,
    PROPERTY_PER_PAGE,
    PROPERTY_RECORD,
    FreeRecords,
    free_dynamic_records,
    free_property_records,
    text_runs,
)
from memorepair.settings import load_settings

SECRET = "Quote passport QX77812 when booking flights."


def test_the_filler_covers_every_free_record_of_each_store_and_a_log_file() -> None:
    plan = plan_filler(FreeRecords(properties=5_000, strings=20_000, arrays=300), 1 << 20)
    assert plan.nodes >= 5_000 + PROPERTY_PER_PAGE  # one full property record per node
    assert plan.texts * FILL_RECORDS >= 20_000 + DYNAMIC_PER_PAGE
    assert plan.lists * FILL_RECORDS >= 300 + DYNAMIC_PER_PAGE
    assert plan.nodes >= max(plan.texts, plan.lists)
    # Nothing free still rotates the log: more filler text than one log file holds.
    none = plan_filler(FreeRecords(0, 0, 0), rotation_bytes=1 << 20)
    assert none.texts * FILL_RECORDS * DYNAMIC_DATA >= 1 << 20


def test_filler_values_fill_whole_records() -> None:
    plan = FillerPlan(nodes=3, texts=2, lists=1)
    # A part-filled record would keep the old bytes after its data.
    assert len(plan.text.encode()) == FILL_RECORDS * DYNAMIC_DATA
    assert len(plan.item.encode()) + LIST_HEADER == FILL_RECORDS * DYNAMIC_DATA
    assert plan.as_dict()["bytes"] == 3 * FILL_RECORDS * DYNAMIC_DATA + 3 * 32


def dynamic_store(path: Path, records: list[bytes | None], size: int = 128) -> None:
    """A string store: header record, then records (None: never written, all zeros)."""
    blob = bytearray(size.to_bytes(4, "big") + bytes(size - 4))
    for record in records:
        blob += bytes(size) if record is None else record.ljust(size, b"\0")
    blob += bytes(-len(blob) % PAGE)  # whole pages, like the page cache writes
    path.write_bytes(bytes(blob))


def test_free_dynamic_records_are_those_not_in_use_up_to_the_last_written(
    tmp_path: Path,
) -> None:
    live = b"\x10\x00\x00\x05\xff\xff\xff\xffhello"
    freed = b"\x00\x00\x00\x05\xff\xff\xff\xffQX778"  # the bytes stay, the flag goes
    path = tmp_path / "neostore.propertystore.db.strings"
    dynamic_store(path, [live, freed, None, freed, live, None, None])
    assert free_dynamic_records(path) == 3  # the never-written one between counts too
    dynamic_store(path, [live] * 70 + [freed] * 2)  # across a page
    assert free_dynamic_records(path) == 2
    assert free_dynamic_records(tmp_path / "missing") == 0


def property_store(path: Path, records: list[bytes]) -> None:
    """A property store in the aligned layout: 199 records to a page, then padding."""
    blob = bytearray()
    for start in range(0, len(records), PROPERTY_PER_PAGE):
        page = b"".join(r.ljust(PROPERTY_RECORD, b"\0") for r in records[start : start + 199])
        blob += page.ljust(PAGE, b"\0")
    path.write_bytes(bytes(blob))


def test_free_property_records_have_no_property_type_in_their_first_block(
    tmp_path: Path,
) -> None:
    links = b"\x00\x00\x00\x00\x01\xff\xff\xff\xff"
    short_string = (0x0B << 24 | 7).to_bytes(8, "big") + b"\x12\x34\x56\x78" * 2
    live = links + short_string
    freed = links + bytes(8) + b"\x12\x34\x56\x78" * 2  # first block zeroed, rest kept
    path = tmp_path / "neostore.propertystore.db"
    property_store(path, [live] * 250 + [freed] * 3 + [live])
    assert free_property_records(path) == 3
    # Not the aligned layout (a record over the page padding): every record counts.
    path.write_bytes(b"\x01" * PAGE)
    assert free_property_records(path) == -(-PAGE // PROPERTY_RECORD)


def record_file(path: Path, text: str) -> None:
    """Text cut into 120-byte records behind 8-byte binary headers, as a string store."""
    data = text.encode()
    blob = bytearray()
    for start in range(0, len(data), DYNAMIC_DATA):
        chunk = data[start : start + DYNAMIC_DATA]
        blob += b"\x00\x00\x00" + bytes([len(chunk)]) + b"\xff\xff\xff\xff" + chunk
        blob += b"\x00" * (DYNAMIC_DATA - len(chunk))
    path.write_bytes(bytes(blob))


def test_the_scan_finds_erased_text_in_binary_files_and_names_them(tmp_path: Path) -> None:
    data = tmp_path / "data"
    (data / "databases").mkdir(parents=True)
    record_file(data / "databases" / "strings", f"- {SECRET} [id-doc@v1]\n- Ana prefers aisle.")
    record_file(data / "databases" / "other", "Ana prefers aisle seats. " * 20)
    (data / "empty").write_bytes(b"")
    matcher = Matcher.of(fingerprints([SECRET]))
    scan = scan_files([data], matcher)
    assert scan.files == 3
    assert scan.copies == {"data/databases/strings": 1}
    assert scan_files([data], Matcher.of([])).copies == {}  # nothing to look for


@pytest.mark.parametrize("chunk", [7, 16, 64, 1 << 20])
def test_text_runs_are_whole_across_chunks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk: int
) -> None:
    monkeypatch.setattr(store_files, "CHUNK", chunk)
    path = tmp_path / "f"
    long_run = "lorem ipsum " * 30 + SECRET
    blob = b"\x00" * 60 + b"passport QX77812" + b"\xff" * 9 + long_run.encode() + b"\x01ab\x02"
    path.write_bytes(blob + "Zürich QX77812".encode())
    assert list(text_runs(path)) == ["passport QX77812", long_run, "Zürich QX77812"]


@pytest.mark.parametrize("at", range(0, 400, 13))
def test_a_very_long_run_is_read_in_overlapping_pieces(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, at: int
) -> None:
    monkeypatch.setattr(store_files, "CHUNK", 64)
    monkeypatch.setattr(store_files, "MAX_RUN", 256)
    monkeypatch.setattr(store_files, "RUN_OVERLAP", 64)
    path = tmp_path / "log"
    path.write_text("x" * at + " " + SECRET + " " + "y" * 600)
    runs = list(text_runs(path))
    assert len(runs) > 1 and all(len(run) <= 256 + 64 + store_files.TAIL for run in runs)
    assert any(SECRET in run for run in runs)


def test_last_log_version(tmp_path: Path) -> None:
    assert last_log_version(tmp_path) == -1
    for name in ("neostore.transaction.db.0", "neostore.transaction.db.12", "checkpoint.3"):
        (tmp_path / name).write_bytes(b"")
    assert last_log_version(tmp_path) == 12


def test_purge_refuses_a_server_it_does_not_run(tmp_path: Path) -> None:
    settings = load_settings(neo4j_uri="neo4j+s://example.invalid", state_dir=tmp_path)
    with pytest.raises(ConfigError, match="local server only"):
        purge_local_server(settings)
