"""Reading a stopped Neo4j's files: free records in the property stores, text in any file.

The one place that knows Neo4j 5's record layout (record-aligned format, the default for
new databases since 5.0 and what the local server creates), read from Neo4j's own source
(`DynamicRecordFormat`, `PropertyRecordFormat`) and checked against real files:

- string and array stores (`neostore.propertystore.db.strings`, `.arrays`): record 0 is
  a header whose first 4 bytes are the record size (128: an 8-byte header, 120 bytes of
  data); a record is in use when bit 0x10 of its first byte is set. A freed record keeps
  its data: only that byte is cleared.
- property store (`neostore.propertystore.db`): 41-byte records (9 bytes of links, four
  8-byte blocks), 199 to an 8 KiB page and 33 bytes of padding; a record is in use when
  its first block names a property type. A freed record has its first block zeroed and
  keeps the other three.

Anything that does not look like that layout (a page whose padding is not zero, a record
size that does not divide a page) is counted as if every record were free: an
overestimate, which only costs the purge more filler.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

PAGE = 8192
PROPERTY_RECORD = 41
PROPERTY_PER_PAGE = PAGE // PROPERTY_RECORD
DYNAMIC_HEADER = 8


@dataclass(frozen=True)
class FreeRecords:
    """Records of each property store that are not in use, up to the last record holding
    any byte (beyond it the file is zeros: preallocated, never written)."""

    properties: int
    strings: int
    arrays: int

    @classmethod
    def of(cls, database_dir: Path) -> FreeRecords:
        store = database_dir / "neostore.propertystore.db"
        return cls(
            properties=free_property_records(store),
            strings=free_dynamic_records(store.with_name(store.name + ".strings")),
            arrays=free_dynamic_records(store.with_name(store.name + ".arrays")),
        )


def free_dynamic_records(path: Path) -> int:
    """Free records of a string or array store (record 0, the header, excluded)."""
    if not path.is_file() or path.stat().st_size < 4:
        return 0
    with open(path, "rb") as handle:
        size = int.from_bytes(handle.read(4), "big")
    if not DYNAMIC_HEADER < size <= PAGE or PAGE % size:
        return math.ceil(path.stat().st_size / max(size, 1))
    return _count_free(path, size, PAGE // size, lambda r: not r[0] & 0x10, first=1)


def free_property_records(path: Path) -> int:
    """Free records of the property store (none is reserved)."""
    if not path.is_file():
        return 0
    padding = bytes(PAGE - PROPERTY_PER_PAGE * PROPERTY_RECORD)
    for page in _pages(path):
        if page[PROPERTY_PER_PAGE * PROPERTY_RECORD :] not in (padding, b""):
            return math.ceil(path.stat().st_size / PROPERTY_RECORD)  # not the aligned layout
    return _count_free(path, PROPERTY_RECORD, PROPERTY_PER_PAGE, _property_free, first=0)


def _property_free(record: bytes) -> bool:
    first_block = int.from_bytes(record[9:17], "big")
    return (first_block >> 24) & 0xF == 0


def _count_free(
    path: Path, size: int, per_page: int, free: Callable[[bytes], bool], *, first: int
) -> int:
    """Free records up to the last record with any non-zero byte."""
    counted = seen_free = 0
    zero = bytes(size)
    for number, page in enumerate(_pages(path)):
        for slot in range(per_page):
            record = page[slot * size : (slot + 1) * size]
            if len(record) < size or number * per_page + slot < first:
                continue
            if free(record):
                seen_free += 1
            if record != zero:
                counted = seen_free
    return counted


def _pages(path: Path) -> Iterator[bytes]:
    with open(path, "rb") as handle:
        while page := handle.read(PAGE):
            yield page


# ---- text in any file -------------------------------------------------------------------------
#: Printable UTF-8: ASCII text and well-formed multi-byte sequences, six or more in a row.
_RUN = re.compile(
    rb"(?:[\t\n\r\x20-\x7e]|[\xc2-\xdf][\x80-\xbf]|[\xe0-\xef][\x80-\xbf]{2}"
    rb"|[\xf0-\xf4][\x80-\xbf]{3}){6,}"
)
CHUNK = 8 << 20
#: Bytes at the end of a chunk that may begin a run the next chunk continues.
TAIL = 16
#: A run longer than this (a text log is one run) is looked at in pieces that overlap
#: by RUN_OVERLAP bytes, so any phrase or identifier shorter than that is seen whole.
MAX_RUN = 1 << 20
RUN_OVERLAP = 4 << 10


def text_runs(path: Path) -> Iterator[str]:
    """The printable UTF-8 runs of a file, read a chunk at a time; a run that reaches the
    end of a chunk is carried over whole into the next.

    Neo4j stores a string of more than a few dozen characters as UTF-8 in 120-byte pieces
    (string store, transaction log), so its text shows up in these runs; a short string
    is bit-packed into its property record and does not.
    """
    with open(path, "rb") as handle:
        carry = b""
        while block := handle.read(CHUNK):
            blob = carry + block
            cut = max(len(blob) - TAIL, 0)
            for match in _RUN.finditer(blob):
                if match.end() >= cut:
                    cut = min(cut, match.start())
                    break
                yield _decode(match.group())
            carry = blob[cut:]
            if len(carry) > MAX_RUN:
                yield _decode(carry)
                carry = carry[-RUN_OVERLAP:]
        yield from (_decode(match.group()) for match in _RUN.finditer(carry))


def _decode(run: bytes) -> str:
    return run.decode("utf-8", errors="replace")
