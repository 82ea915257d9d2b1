"""Heap, page cache and stop timeout for the local server, sized from the store on disk.

The barrier and its hold step are one transaction each by contract, and Neo4j keeps a
transaction's uncommitted changes on the heap, so the heap bounds the largest cascade a
repair can withdraw: 2 GB withdraws ~100k nodes, a 1e6-node store (a ~520k-node cascade)
needed 8 GB. `auto` (the default of MEMOREPAIR_HEAP) gives the heap 8 KiB per node the
store holds, at least 2 GB; the page cache gets the store's size (it reads fastest
when the whole store fits), at least 512 MB; together they stay within 3/4 of the
machine's memory. A clean stop writes a checkpoint of every dirty page, so the stop
timeout grows with the page cache. Explicit values always win; `memorepair neo4j start`
prints what it chose and why.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path

GIB = 1 << 30
MIB = 1 << 20
#: Heap per stored node (8 GB for the 1e6-node store, whose cascade held ~520k nodes).
HEAP_PER_NODE = 8 << 10
MIN_HEAP = 2 * GIB
MIN_PAGECACHE = 512 * MIB
#: A JVM heap above 31 GB loses compressed object pointers (more memory, not less).
MAX_HEAP = 31 * GIB
#: Bytes per record in the node store file (Community's record format, 5.26 and 2026.x).
NODE_RECORD_BYTES = 15
#: Stop timeout: a floor, plus time to write each GiB of page cache at a slow disk's pace.
STOP_FLOOR_S = 300.0
STOP_PER_GIB_S = 120.0


@dataclass(frozen=True)
class Sizing:
    heap: str
    pagecache: str
    stop_timeout_s: float
    #: One line for `neo4j start`: what was chosen and from what.
    reason: str


def size_server(
    store_dir: Path,
    heap: str,
    pagecache: str,
    stop_timeout_s: float | str,
    memory_bytes: int | None = None,
) -> Sizing:
    """The settings to start with; `auto` values from the store in `store_dir`."""
    nodes, store_bytes = store_facts(store_dir)
    memory = memory_bytes if memory_bytes is not None else machine_memory()
    heap_bytes = parse_size(heap) if heap != "auto" else auto_heap(nodes, memory)
    cache_bytes = (
        parse_size(pagecache)
        if pagecache != "auto"
        else auto_pagecache(store_bytes, memory, heap_bytes)
    )
    stop = (
        float(stop_timeout_s)
        if stop_timeout_s != "auto"
        else STOP_FLOOR_S + STOP_PER_GIB_S * cache_bytes / GIB
    )
    reason = (
        f"store: ~{nodes:,} nodes, {store_bytes / MIB:,.0f} MB on disk; machine: "
        f"{memory / GIB:.0f} GB -> heap {format_size(heap_bytes)}"
        f"{' (auto)' if heap == 'auto' else ''}, page cache {format_size(cache_bytes)}"
        f"{' (auto)' if pagecache == 'auto' else ''}, stop timeout {stop:.0f}s"
    )
    return Sizing(format_size(heap_bytes), format_size(cache_bytes), stop, reason)


def auto_heap(nodes: int, memory: int) -> int:
    wanted = max(MIN_HEAP, _round_up(nodes * HEAP_PER_NODE, GIB))
    return max(MIN_HEAP, min(wanted, MAX_HEAP, _round_down(memory // 2, GIB)))


def auto_pagecache(store_bytes: int, memory: int, heap_bytes: int) -> int:
    room = max(MIN_PAGECACHE, memory * 3 // 4 - heap_bytes)
    return min(max(MIN_PAGECACHE, _round_up(store_bytes, 256 * MIB)), room)


def store_facts(store_dir: Path) -> tuple[int, int]:
    """(nodes, bytes) of a database folder: nodes from the node store's record count
    (the highest id in use, deleted ones included), bytes summed over its files."""
    total = 0
    nodes = 0
    for folder, _dirs, files in os.walk(store_dir):
        for name in files:
            try:
                size = os.lstat(os.path.join(folder, name)).st_size
            except OSError:
                continue
            total += size
            if name == "neostore.nodestore.db":
                nodes = size // NODE_RECORD_BYTES
    return nodes, total


def machine_memory() -> int:
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def parse_size(text: str) -> int:
    """`512m` / `8g` -> bytes (the forms settings accept)."""
    unit = {"m": MIB, "g": GIB}[text[-1].lower()]
    return int(text[:-1]) * unit


def format_size(size: int) -> str:
    """Bytes as the JVM and neo4j.conf take them: whole GiB as `Ng`, else `Nm`."""
    return f"{size // GIB}g" if size % GIB == 0 else f"{math.ceil(size / MIB)}m"


def _round_up(value: int, step: int) -> int:
    return -(-value // step) * step


def _round_down(value: int, step: int) -> int:
    return value // step * step
