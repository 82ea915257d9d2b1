"""Erasure that erases the bytes too: after a delete and `neo4j purge`, no file of the
local server's data (or logs) folder holds the deleted text, byte for byte.

Runs a private server of its own (the purge restarts it twice), in a temporary state
folder, and searches every file for the text's UTF-8 bytes and, for a short text, for
the bit-packed form Neo4j stores it in (inside a property record, not as UTF-8).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.servers import private_settings

from memorepair.api import MemoryStore, open_store, purge_local_server
from memorepair.local.server import LocalServer
from memorepair.settings import Settings

PASSPORT = "Quote passport QX77812 when booking flights."
#: Short enough (18 characters) for Neo4j to pack it into its property record.
VISA = "Visa QX77812 valid"
#: The second 8-byte block of VISA as Neo4j 5.26 encodes it (LongerShortString.encode,
#: any property key): pure character bits, so it does not depend on the key id. Searched
#: in both byte orders; the test first checks that it is found before the purge.
VISA_PACKED = bytes.fromhex("0ec03ae7defac220")
KEPT = "Ana prefers aisle seats."

ERASED_BYTES = [b"QX77812", b"Quote passport", b"when booking flights", b"Visa QX"]


@pytest.fixture
def private(tmp_path: Path, neo4j_settings: Settings) -> Iterator[tuple[Settings, LocalServer]]:
    settings = private_settings(tmp_path, neo4j_settings)
    server = LocalServer(settings)
    server.start()
    try:
        yield settings, server
    finally:
        server.stop()


def files_holding(server: LocalServer, needles: list[bytes]) -> dict[str, list[bytes]]:
    """Every file under data/ and logs/ that holds one of the byte strings."""
    found: dict[str, list[bytes]] = {}
    for folder in (server.home / "data", server.home / "logs"):
        for path in sorted(p for p in folder.rglob("*") if p.is_file()):
            blob = path.read_bytes()
            hits = [n for n in needles if n in blob]
            if hits:
                found[str(path.relative_to(server.home))] = hits
    return found


def record_and_delete(memory: MemoryStore) -> None:
    memory.record({"uid": "id-doc", "kind": "record", "content": PASSPORT})
    memory.record({"uid": "visa", "kind": "record", "content": VISA})
    memory.record({"uid": "pref", "kind": "record", "content": KEPT})
    memory.record(
        {
            "uid": "profile",
            "kind": "summary",
            "content": f"- {PASSPORT} [id-doc@v1]\n- {VISA} [visa@v1]\n- {KEPT} [pref@v1]",
            "inputs": ["id-doc", "visa", "pref"],
        }
    )
    memory.record(
        {
            "uid": "booking-skill",
            "kind": "skill",
            "arch": "prompt",
            "content": f"# Skill: Book flights\n- {PASSPORT} [id-doc@v1]\n- {KEPT} [pref@v1]",
            "meta": {"title": "Book flights", "instruction": PASSPORT},
            "inputs": ["id-doc", "pref"],
        }
    )
    report = memory.repair({"id": "gdpr-1", "type": "delete", "roots": ["id-doc", "visa"]})
    assert report.status == "completed"
    assert memory.audit_erasure("gdpr-1")["ok"]  # the graph holds no copy...


def test_purge_removes_the_erased_bytes_from_every_file(
    private: tuple[Settings, LocalServer],
) -> None:
    settings, server = private
    with open_store(ns="phys", settings=settings) as memory:
        memory.apply_schema()
        record_and_delete(memory)
    packed = [VISA_PACKED, VISA_PACKED[::-1]]
    # ...but the files still do: the transaction log holds every write and its before-image.
    before = files_holding(server, ERASED_BYTES + packed)
    assert any(b"QX77812" in hits for hits in before.values()), before
    assert any(set(hits) & set(packed) for hits in before.values()), before

    report = purge_local_server(settings)

    assert report.erasing_events == 1 and report.fingerprints > 0
    before, after = report.before, report.after
    assert before.scan.copies, "the fingerprint scan found nothing before the purge"
    assert before.free.strings >= 2  # the deleted texts' records, freed but not cleared
    assert after.scan.copies == {} and report.ok
    assert not set(before.tx_logs) & set(after.tx_logs)  # rotated out and deleted
    assert server.status().running  # left as found
    assert files_holding(server, ERASED_BYTES + packed) == {}
    kept = files_holding(server, [KEPT.encode()])  # the search does read the store files
    assert any(name.startswith("data/databases/neo4j/") for name in kept), kept

    with open_store(ns="phys", settings=settings) as memory:
        assert memory.audit_erasure("gdpr-1")["ok"]
        [pref] = memory.retrieve(uid="pref")
        assert pref.content == KEPT
        [profile] = memory.retrieve(uid="profile")
        assert "QX77812" not in profile.content and KEPT in profile.content
        fillers = memory.store.driver.execute_query(
            "MATCH (f:PurgeFiller) RETURN count(f) AS n"
        ).records
        assert fillers[0]["n"] == 0
