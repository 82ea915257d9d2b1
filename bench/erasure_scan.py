"""What an erasing event's closing scan costs (prints a table; asserts nothing):
``python -m bench.erasure_scan``.

A `delete` completes only when the scan `audit erasure` runs finds no copy of the erased
text anywhere in the namespace, so a delete's time grows with the namespace, not only
with its cascade. For each ``--sizes`` N: a namespace of N notes plus a root record and
ten summaries derived from it (a cascade of 11), imported with ``record_many``; then one
``forget`` of the root. Printed per size: the delete's wall time, its ``execution`` step
(which begins with the fingerprints: the roots' texts and a read of the served texts, for
the phrases other memory shares) and its ``erasure`` step (redaction and the closing scan),
from the report's own timings, the erasure step's share of the delete, `audit erasure`
alone right after, and its milliseconds per scanned version. The load average is printed
with the figures; compare shares and ratios within one run.

Run against the configured Neo4j (``MEMOREPAIR_*``); each size uses a fresh namespace,
cleared afterwards.
"""

from __future__ import annotations

import os
import time
import uuid

from bench import args as bench_args
from memorepair.api import open_store
from memorepair.model import ArtifactIn, Kind

SECRET = "Ana's passport number is QX77121, valid until 2031."


def memory(n: int) -> list[ArtifactIn]:
    items = [ArtifactIn(uid="root", kind=Kind.RECORD, content=SECRET)]
    items += [
        ArtifactIn(
            uid=f"note-{i}",
            kind=Kind.RECORD,
            content=f"Note {i}: the train to Basel leaves at {i % 24}:00 from platform "
            f"{i % 9}, seat {i}.",
        )
        for i in range(n)
    ]
    items += [
        ArtifactIn(
            uid=f"sum-{i}",
            kind=Kind.SUMMARY,
            content=f"- {SECRET} [root@v1]\n- the train leaves at {i % 24}:00 [note-{i}@v1]",
            inputs=["root", f"note-{i}"],
        )
        for i in range(10)
    ]
    return items


def run(sizes: list[int]) -> None:
    print(f"load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    header = (
        ("versions", 9),
        ("delete s", 9),
        ("execution s", 12),
        ("erasure s", 10),
        ("share", 6),
        ("audit s", 8),
    )
    print(" ".join(f"{name:>{width}}" for name, width in header) + f" {'ms/ver':>7}")
    for n in sizes:
        with open_store(ns=f"bench-erasure-{uuid.uuid4().hex[:8]}") as store:
            try:
                store.record_many(memory(n))
                store.flush_embeddings()
                started = time.perf_counter()
                report = store.forget("root", event_id="bench-erasure")
                total = time.perf_counter() - started
                started = time.perf_counter()
                proof = store.audit_erasure("bench-erasure")
                audit_s = time.perf_counter() - started
                scanned = proof["scanned"]["nodes"]
                step = report.seconds["erasure"]
                execution = report.seconds["execution"]
                print(
                    f"{scanned:>9} {total:>9.2f} {execution:>12.2f} {step:>10.2f} "
                    f"{step / total:>6.2f} {audit_s:>8.2f} {1000 * audit_s / scanned:>7.3f}"
                )
            finally:
                store.clear()


def main() -> None:
    parser = bench_args.parser("python -m bench.erasure_scan", __doc__)
    parser.add_argument(
        "--sizes",
        default="1e3,1e4,5e4",
        help="notes per namespace, comma-separated (default: 1e3,1e4,5e4)",
    )
    args = parser.parse_args()
    run([int(float(size)) for size in args.sizes.split(",")])


if __name__ == "__main__":
    main()
