"""What a repair's audit record costs: its phases with the record and without, interleaved.

``python -m bench.audit_share --sizes 1e5 --repeats 3`` repairs the layered memory's hub
(``bench.perf``'s memory and ``correct`` event, no-op operators) again and again on one
server, alternating the engine as it is with a *lean* engine, and measures the write floor
(``bench.perf.write_floor``) right after each repair. The lean engine runs two of the
engine's write statements in a form that writes only what the floor writes:

- ``publish_fresh`` without the PUBLISHED edge, the predecessor's WITHDREW outcome, the
  RELATED edges and the successor's audit properties (event, publication time, verdict,
  operator, measured work, meta terms, embedding model): ``bench/cypher/lean_publish_fresh``;
- ``record_candidates`` without the candidate facts on each WITHDREW edge (mode, reason,
  value, cost, their sources, requirements): ``bench/cypher/lean_record_candidates``.

The lean engine is not a correct one: an auditor could not tell why a version was or was
not repaired, which event published its successor, or whether it was validated. It shows
how much of a repair's distance from the floor is that record, and how much is left
without it (reading each successor's support to build it, the retained-input check, the
pipeline). Rounds alternate which engine goes first. The first repair of each size, on the
imported, embedded versions, is a warm-up and is left out of the medians. Prints; asserts
nothing.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial

from bench import args as bench_args
from bench import perf
from memorepair import cascade, publication
from memorepair.api import MemoryStore, open_store
from memorepair.model import artifact_key

#: The lean engine's statements, by the engine constant each stands in for.
LEAN_PUBLISH_FRESH = perf._query("lean_publish_fresh")
LEAN_RECORD_CANDIDATES = perf._query("lean_record_candidates")
ENGINES = ("engine", "lean")
COLUMNS = ("barrier", "hold", "candidates", "record", "execution")


@contextmanager
def lean_statements(lean: bool = True) -> Iterator[None]:
    """Run the engine's repairs with the lean statements in this block (bench only)."""
    saved = publication.PUBLISH_FRESH, cascade.RECORD_CANDIDATES
    if lean:
        publication.PUBLISH_FRESH = LEAN_PUBLISH_FRESH
        cascade.RECORD_CANDIDATES = LEAN_RECORD_CANDIDATES
    try:
        yield
    finally:
        publication.PUBLISH_FRESH, cascade.RECORD_CANDIDATES = saved


@dataclass(frozen=True)
class Run:
    engine: str
    round: int
    seconds: dict[str, float]
    e2e: float
    floor: float
    #: CPU seconds during execution: the server's and this process's (nan: no local server).
    exec_cpu: tuple[float, float] = (float("nan"), float("nan"))

    @property
    def ratio(self) -> float:
        return self.e2e / self.floor

    @property
    def packed(self) -> float:
        """e2e had execution kept both cores busy (its CPU seconds over two), the other
        phases as measured: the most overlap inside execution could buy."""
        return self.e2e - self.seconds["execution"] + sum(self.exec_cpu) / 2


class ExecutionCpu:
    """A repair's progress listener that reads the server's and this process's CPU seconds
    as execution starts and ends: how busy the two cores were while successors were built
    and written."""

    def __init__(self, pid: int | None) -> None:
        self._pid = pid
        self._marks: list[tuple[float, float]] = []

    def __call__(self, step: str, done: int, total: int) -> None:
        if step == "execution" and total == 1:
            server = perf.cpu_seconds(self._pid) if self._pid else None
            self._marks.append((float("nan") if server is None else server, time.process_time()))

    def seconds(self) -> tuple[float, float]:
        """(server, this process) CPU seconds over every start-end pair of the step."""
        if not self._marks or len(self._marks) % 2:
            return float("nan"), float("nan")
        spans = list(zip(self._marks[0::2], self._marks[1::2], strict=True))
        return sum(e[0] - s[0] for s, e in spans), sum(e[1] - s[1] for s, e in spans)


def repair_once(memory: MemoryStore, engine: str, round_: int, nth: int) -> Run:
    """The `nth` repair of the hub (by `engine`, in round `round_`), its vectors written,
    then the floor's writes (numbered `nth` too: each floor run has an event of its own)."""
    cpu = ExecutionCpu(perf.server_pid(memory))
    with lean_statements(engine == "lean"):
        event = perf.correct_event(f"share-{nth}-{engine}")
        e2e, report = perf._timed(partial(memory.repair, event, progress=cpu))
    memory.flush_embeddings()
    floor = perf.write_floor(memory, [artifact_key(memory.ns, perf.HUB)], nth)
    return Run(engine, round_, dict(report.seconds), e2e, sum(floor.values()), cpu.seconds())


def order_of(round_: int) -> tuple[str, ...]:
    """The engines of one round: the first goes first in odd rounds, last in even ones."""
    return ENGINES if round_ % 2 else ENGINES[::-1]


def bench_size(base: MemoryStore, n: int, repeats: int) -> list[Run]:
    memory = perf._fresh(f"audit-share-{n}", base)
    perf._import_embedded(memory, perf.layered_memory(n))
    memory.embedding_lags()  # the import's
    warm = repair_once(memory, "engine", 0, 0)
    print_run(n, warm, note="warm-up, left out")
    runs: list[Run] = []
    for round_ in range(1, repeats + 1):
        for engine in order_of(round_):
            runs.append(repair_once(memory, engine, round_, len(runs) + 1))
            print_run(n, runs[-1])
    memory.clear()
    return runs


def print_run(n: int, run: Run, note: str = "") -> None:
    cells = " ".join(f"{run.seconds.get(c, float('nan')):>10.2f}" for c in COLUMNS)
    server, python = run.exec_cpu
    print(
        f"{n:>9} {run.engine:>6} {run.round:>5} {cells} {run.e2e:>7.2f} {run.floor:>7.2f} "
        f"{run.ratio:>8.2f} {server:>8.2f} {python:>8.2f} {run.packed / run.floor:>8.2f} {note}",
        flush=True,
    )


def print_medians(n: int, runs: Sequence[Run]) -> None:
    for engine in ENGINES:
        mine = [r for r in runs if r.engine == engine]
        median = perf._median  # nan for no runs (--repeats 0)
        cells = " ".join(
            f"{median([r.seconds.get(c, float('nan')) for r in mine]):>10.2f}" for c in COLUMNS
        )
        e2e = median([r.e2e for r in mine])
        floor = median([r.floor for r in mine])
        ratio = median([r.ratio for r in mine])
        packed = median([r.packed / r.floor for r in mine])
        print(
            f"{n:>9} {engine:>6} {'med':>5} {cells} {e2e:>7.2f} {floor:>7.2f} {ratio:>8.2f} "
            f"{'':>8} {'':>8} {packed:>8.2f}"
        )


def main(argv: Sequence[str] | None = None) -> None:
    parser = bench_args.parser("python -m bench.audit_share", __doc__)
    parser.add_argument("--sizes", default="1e5", help="artifact counts (default: 1e5)")
    parser.add_argument("--repeats", type=int, default=3, help="rounds per size (default: 3)")
    options = parser.parse_args(argv)
    sizes = [int(float(s)) for s in options.sizes.split(",") if s]
    print("seconds; e2e = memory.repair wall clock; floor = bench.perf.write_floor right after;")
    print("ratio = e2e / floor of the same run; lean = the engine without its audit record;")
    print("srv/py cpu = CPU seconds of the server and of this process during execution;")
    print("packed = e2e had execution kept both cores busy (its CPU over two), over the floor")
    print(
        f"{'artifacts':>9} {'engine':>6} {'round':>5} "
        + " ".join(f"{c:>10}" for c in COLUMNS)
        + f" {'e2e':>7} {'floor':>7} {'e2e/flr':>8} {'srv cpu':>8} {'py cpu':>8} {'packed':>8}"
    )
    with open_store(ns="audit-share") as base:
        perf.register_noops(base)
        for n in sizes:
            print_medians(n, bench_size(base, n, options.repeats))


if __name__ == "__main__":
    main()
