"""Performance figures on synthetic memories (prints tables; asserts nothing).

Run ``make bench`` (``python -m bench.perf`` from the checkout) against the
configured Neo4j. Five sections, each selectable with ``--only``:

``phases``     a layered memory (records -> caches with a replay recipe -> summaries ->
               skills) of each ``--sizes`` artifact count, imported with the engine's batched
               importer; one ``correct`` event on a hub record whose cascade covers about half
               of it, repaired ``--repeats`` times (each repeat is a new event on the same
               hub, so it repairs the previous repair's successors) with no-op operators.
               Reach is timed as the plan's reach query alone; the other phases are the
               engine's own ``RepairReport.seconds``; ``raw`` is one query returning the
               cascade's nodes (with content) and influence edges, the read floor the
               engine total is compared to; ``floor`` (``write_floor``, after the engine's
               run in each repeat) is that read plus the least the versioned model writes:
               withdraw by vid, a WITHDREW edge, a new version with SUPERSEDES and
               influence edges per artifact, in topological batches; nothing else (no
               candidates, operators, staging, outcomes or crash safety). ``--sizes 1e6``
               (a ~540k-node cascade, ~8 min per repeat with the floor plus ~3 min import)
               needs a bigger server heap than the default 2g: the barrier and the hold
               step are one transaction each (``MEMOREPAIR_HEAP=8g memorepair neo4j start``; up to
               5.7 GiB seen in use). With a 4g page cache, the shutdown checkpoint after
               such a run took longer than the default ``MEMOREPAIR_STOP_TIMEOUT_S`` (300).
``selection``  min-cut backends on the closure networks of ``selection_bench``: OR-tools
               (large-graph backend), igraph and networkx; igraph and networkx run in a child
               process killed at ``--solver-cap`` seconds.
``reach``      the pruning reach query vs path enumeration on diamond ladders (two nodes per
               level, each requiring both nodes of the level above: 2*d+1 nodes, 2**d
               paths); enumeration stops after it first exceeds ``--naive-cap`` seconds.
``writes``     ``record_many`` (UNWIND $rows batches) vs ``record`` (one artifact per
               transaction) for ``--write-n`` artifacts, ``--repeats`` times (new uids each);
               ``record`` latency against a bare one-node write, embeddings deferred and
               inline; ``record_many`` rates for ``--batch-n`` artifacts.
``floorreads`` the write floor of the first ``--sizes`` memory at each ``--floor-paces``,
               and then the engine's repair, each with the phases section's uid reader:
               what the least writes of any repair cost serving reads, at the pace a repair
               within a given multiple of the floor would need.
"""

from __future__ import annotations

import itertools
import multiprocessing
import os
import random
import resource
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from bench import args as bench_args
from bench import selection_bench
from memorepair import queries
from memorepair import selection as sel
from memorepair.api import MemoryStore, open_store
from memorepair.cascade import PLAN_CASCADE
from memorepair.errors import DatabaseError
from memorepair.graphs import topological
from memorepair.model import Arch, Artifact, ArtifactIn, Kind, Mode, Recipe, artifact_key
from memorepair.operators.base import RepairContext, Successor, Validation
from memorepair.queries import Query
from memorepair.store import rest

SECTIONS = ("phases", "selection", "reach", "writes", "floorreads")
PHASES = (
    "barrier",
    "hold",
    "candidates",
    "selection",
    "record",
    "execution",
    "validation",
    "publication",
)

#: The benchmarks' own query files (`bench/cypher/`), named like the engine's.
BENCH_CYPHER = Path(__file__).resolve().parent / "cypher"


def _query(name: str) -> Query:
    return queries.named(name, root=BENCH_CYPHER, label="bench/cypher")


#: Baselines: the raw read of a cascade subgraph and the path-enumerating reach.
RAW_CASCADE = _query("raw_cascade")
NAIVE_REACH = _query("naive_reach")
SERVER_HEAP = _query("server_heap")
REACH_CASCADE = _query("reach_cascade")
#: The write floor's statements (``write_floor``).
FLOOR_WITHDRAW = _query("floor_withdraw")
FLOOR_EVENT = _query("floor_event")
FLOOR_WITHDREW = _query("floor_withdrew")
FLOOR_SUCCESSORS = _query("floor_successors")
FLOOR_INFLUENCES = _query("floor_influences")
#: The one-node write transaction `record` is compared to (``bench_writes``).
BARE_WRITE = _query("bare_write")
BARE_CLEAR = _query("bare_clear")

#: The write floor's steps, in the order they run (see ``write_floor``).
FLOOR_STEPS = ("read", "order", "withdraw", "withdrew", "successors", "influences")


# ---- no-op operators ------------------------------------------------------------------
class NoOpOperator:
    """Rebuilds an artifact as itself (old content, current support) and always validates."""

    def __init__(self, mode: Mode) -> None:
        self.name = f"bench-noop-{mode.value}"
        self.mode = mode

    def accepts(self, artifact: Artifact) -> bool:
        return True

    def build(self, ctx: RepairContext) -> Successor:
        return Successor(
            content=ctx.artifact.content,
            inputs=tuple(s.uid for s in ctx.support),
            recipe=ctx.artifact.recipe,
            meta=ctx.artifact.meta,
        )

    def validate(self, ctx: RepairContext, successor: Successor) -> Validation:
        return Validation(True)


def register_noops(memory: MemoryStore) -> None:
    """The no-op operators, first, once per registry (several sections share it)."""
    for mode in (Mode.RECOMPUTE, Mode.REGEN, Mode.PARAM):
        noop = NoOpOperator(mode)
        if memory.registry.named(noop.name) is None:
            memory.register_operator(noop, first=True)


# ---- synthetic memories ---------------------------------------------------------------
HUB = "rec-0"
_RECIPE = Recipe(executor="bench.concat", args={})


def layered_memory(n: int, *, seed: int = 0, hub_share: float = 0.8) -> list[ArtifactIn]:
    """``n`` artifacts: 40% records, 30% caches, 20% summaries, 10% skills.

    A cache replays 1-3 records (the hub among them with probability ``hub_share``), a
    summary reads 2-5 caches and 0-2 records, a skill 2-4 summaries (prompt 50%, chain 30%,
    neural 20%). Inputs are drawn uniformly, so fan-out follows a binomial spread; the
    hub's cascade covers about half of the memory.
    """
    rng = random.Random(seed)
    n_rec = max(2, int(n * 0.4))
    n_cache = max(1, int(n * 0.3))
    n_sum = max(1, int(n * 0.2))
    n_skill = max(1, n - n_rec - n_cache - n_sum)
    items: list[ArtifactIn] = []
    records = [f"rec-{i}" for i in range(n_rec)]
    caches = [f"cache-{i}" for i in range(n_cache)]
    summaries = [f"sum-{i}" for i in range(n_sum)]
    for uid in records:
        items.append(ArtifactIn(uid=uid, kind=Kind.RECORD, content=f"fact {uid}"))
    for uid in caches:
        picked = set(rng.sample(records[1:], rng.randint(1, min(3, n_rec - 1))))
        if rng.random() < hub_share:
            picked.add(HUB)
        items.append(
            ArtifactIn(
                uid=uid,
                kind=Kind.CACHE,
                content=f"cache {uid}",
                recipe=_RECIPE,
                inputs=sorted(picked),
            )
        )
    for uid in summaries:
        inputs = set(rng.sample(caches, min(rng.randint(2, 5), n_cache)))
        inputs.update(rng.sample(records, rng.randint(0, 2)))
        items.append(
            ArtifactIn(uid=uid, kind=Kind.SUMMARY, content=f"summary {uid}", inputs=sorted(inputs))
        )
    for i in range(n_skill):
        arch = rng.choices((Arch.PROMPT, Arch.CHAIN, Arch.NEURAL), (5, 3, 2))[0]
        skill_inputs = sorted(set(rng.sample(summaries, min(rng.randint(2, 4), n_sum))))
        items.append(
            ArtifactIn(
                uid=f"skill-{i}",
                kind=Kind.SKILL,
                arch=arch,
                content=f"skill {i}",
                inputs=skill_inputs,
            )
        )
    return items


def diamond_ladder(depth: int, prefix: str = "") -> tuple[str, list[ArtifactIn]]:
    """A root and ``depth`` levels of two nodes each requiring both nodes of the level above.

    2*depth+1 artifacts, 2**depth distinct root-to-bottom paths. Returns (root uid, items).
    """
    root = f"{prefix}dr"
    items = [ArtifactIn(uid=root, kind=Kind.RECORD, content="root")]
    above = [root]
    for level in range(1, depth + 1):
        pair = [f"{prefix}d{level}x", f"{prefix}d{level}y"]
        items += [
            ArtifactIn(uid=uid, kind=Kind.SUMMARY, content=uid, inputs=list(above)) for uid in pair
        ]
        above = pair
    return root, items


def correct_event(event_id: str, root: str = HUB) -> dict[str, Any]:
    return {
        "id": event_id,
        "type": "correct",
        "roots": [root],
        "replacements": [{"replaces": root, "content": f"corrected by {event_id}"}],
    }


# ---- measuring helpers ----------------------------------------------------------------
def _median(values: Sequence[float]) -> float:
    return statistics.median(values) if values else float("nan")


def _timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def _py_peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def _server_memory(memory: MemoryStore) -> str:
    """Server heap in use (JMX) and the server process's peak RSS, when readable."""
    parts = []
    try:
        for record in memory.store.read(SERVER_HEAP):
            heap = record["heap"]
            parts.append(f"heap {heap['used'] / 2**20:.0f}/{heap['max'] / 2**20:.0f} MiB")
    except DatabaseError:
        pass
    pid = server_pid(memory)
    if pid is not None:
        status = Path(f"/proc/{pid}/status")
        if status.is_file():
            for line in status.read_text().splitlines():
                if line.startswith("VmHWM:"):
                    parts.append(f"peak RSS {int(line.split()[1]) / 1024:.0f} MiB")
    return ", ".join(parts) or "n/a"


def _run_query(memory: MemoryStore, query: Query, params: dict[str, Any], timeout: float) -> Any:
    return memory.store.read_capped(query, timeout, **params)


def _plan_operators(plan: Any) -> list[str]:
    names = [str(plan["operatorType"]).removesuffix("@neo4j")]
    for child in plan.get("children", ()):
        names += _plan_operators(child)
    return names


def _explain(memory: MemoryStore, query: Query, params: dict[str, Any]) -> list[str]:
    return _plan_operators(memory.store.explain(query, params))


def _fresh(settings_ns: str, memory: MemoryStore) -> MemoryStore:
    store = MemoryStore(
        memory.store, settings_ns, memory.registry, memory.settings, embedder=memory.embedder
    )
    store.clear()
    return store


# ---- section: phases ------------------------------------------------------------------
@dataclass
class PhaseRow:
    n: int
    run: int
    cascade: int
    selected: int
    reach: float
    plan: float
    raw: float
    seconds: dict[str, float]
    total: float
    floor: dict[str, float]
    #: After `total`, until the last deferred vector was written (`flush_embeddings`).
    indexed: float = float("nan")
    #: Time to searchable, p50 and p99 (s): each successor's publication commit to its
    #: vector's commit (`MemoryStore.embedding_lags`).
    searchable: tuple[float, float] = (float("nan"), float("nan"))

    @property
    def floor_total(self) -> float:
        return sum(self.floor.values())


def write_floor(
    memory: MemoryStore, keys: list[str], run: int, pace: float = 1.0
) -> dict[str, float]:
    """Seconds per step of the least any repair under this data model writes for a cascade.

    One plain read of the cascade (nodes, inputs, out-edges); withdraw it by vid; one
    WITHDREW edge per version from an event node; then, in topological batches of the
    repair's batch size (MEMOREPAIR_REPAIR_BATCH), a new current version per artifact with
    its SUPERSEDES edge and its influence edges. Nothing else: no pruned reach, no
    candidates, selection, operators, staging, validation, outcomes or crash safety. It is
    the yardstick the 100k-descendant target is read against: if these writes alone exceed
    the target on this machine, no implementation of the versioned model can meet it here.
    ``pace`` rests after each batch as a paced repair does (``store.rest``).
    """
    seconds: dict[str, float] = {}
    seconds["read"], cascade = _timed(partial(memory.store.read, RAW_CASCADE, keys=keys))
    start = time.perf_counter()
    inputs = {r["vid"]: [artifact_key(memory.ns, u) for u in r["inputs"] or ()] for r in cascade}
    keys_of = {r["vid"]: r["vid"].rpartition("@")[0] for r in cascade}
    links = [(r["vid"], child) for r in cascade for child in r["out"]]
    order, cyclic = topological(list(inputs), links)
    if cyclic:
        raise RuntimeError(f"write floor: {len(cyclic)} cascade versions lie on a cycle")
    seconds["order"] = time.perf_counter() - start
    size = memory.settings.repair_batch
    batches = [order[i : i + size] for i in range(0, len(order), size)]
    key = f"{memory.ns}/bench-floor-{run}"

    def write(query: Query, **params: Any) -> list[dict[str, Any]]:
        started = time.perf_counter()
        rows = memory.store.write(query, **params)
        rest(time.perf_counter() - started, pace)
        return rows

    def withdraw() -> None:
        for vids in batches:
            write(FLOOR_WITHDRAW, vids=vids)

    def withdrew() -> None:
        memory.store.write(FLOOR_EVENT, key=key, ns=memory.ns, id=f"bench-floor-{run}")
        for vids in batches:
            write(FLOOR_WITHDREW, key=key, vids=vids)

    seconds["withdraw"], _ = _timed(withdraw)
    seconds["withdrew"], _ = _timed(withdrew)
    seconds["successors"] = seconds["influences"] = 0.0
    written = edges = 0
    for vids in batches:
        took, rows = _timed(partial(write, FLOOR_SUCCESSORS, vids=vids))
        seconds["successors"] += took
        written += rows[0]["written"]
        wanted = [{"key": keys_of[v], "keys": inputs[v]} for v in vids if inputs[v]]
        took, rows = _timed(partial(write, FLOOR_INFLUENCES, rows=wanted))
        seconds["influences"] += took
        edges += rows[0]["edges"]
    expected = sum(len(used) for used in inputs.values())
    if (written, edges) != (len(order), expected):  # a floor that skipped work would flatter
        raise RuntimeError(
            f"write floor wrote {written} versions and {edges} influence edges; "
            f"expected {len(order)} and {expected}"
        )
    return seconds


def bench_phases(
    base: MemoryStore, sizes: Sequence[int], repeats: int, paces: Sequence[float] = ()
) -> None:
    print("\n== phases: layered memory, one `correct` event on the hub, no-op operators ==")
    print(f"transactions of {base.settings.repair_batch} rows (MEMOREPAIR_REPAIR_BATCH)")
    print("seconds; reach = plan_cascade query alone; plan = memory.plan (reach, candidates,")
    print("selection; read-only); raw = one query returning the cascade's nodes and edges;")
    print("e2e = memory.repair wall clock; e2e/raw = engine total over the raw read")
    print("barrier = the withdrawal transaction (nothing of the cascade served from its commit);")
    print("hold = the holder record after it (Withdrawn, held_by); record = the descendants'")
    print("WITHDREW edges, with the candidate and selection facts")
    print("floor = the write floor after the engine's run in the same repeat: a plain read,")
    print("withdraw by vid, WITHDREW edges, a new version + SUPERSEDES + influence edges per")
    print("artifact, nothing else (write_floor); its steps on the line under each median")
    print("execution = successors built, staged and published batch by batch (the writer")
    print("publishes each batch behind the builds); publication = outcomes and the last commit")
    print("vectors = after e2e, until the last deferred vector was written; tts50/tts99 = time")
    print("to searchable, each successor's publication to its vector (embeddings deferred; run")
    print("1 copies unchanged predecessors' vectors, later runs repair the floor's versions,")
    print("which have none, so their vectors are computed)")
    header = (
        f"{'artifacts':>9} {'run':>3} {'cascade':>7} {'sel':>6} {'import':>7} {'reach':>6} "
        f"{'plan':>6} {'raw':>6} "
        + " ".join(f"{p[:7]:>7}" for p in PHASES)
        + f" {'e2e':>7} {'e2e/raw':>7} {'floor':>7} {'e2e/flr':>7} {'vectors':>7} {'tts50':>6} "
        + f"{'tts99':>6}"
    )
    register_noops(base)  # the registry is shared by every namespace's MemoryStore
    reads: list[tuple[int, list[float], DuringRepair]] = []
    trade: list[tuple[float, list[float], DuringRepair]] = []
    print(header)
    for n in sizes:
        memory = _fresh(f"perf-phases-{n}", base)
        items = layered_memory(n)
        # import + the deferred embeddings, so the repair runs on a quiet server
        import_s, _ = _timed(partial(_import_embedded, memory, items))
        memory.embedding_lags()  # the import's: not a repair's
        uids = [item.uid for item in items]
        del items
        rows: list[PhaseRow] = []
        for run in range(1, repeats + 1):
            keys = [artifact_key(memory.ns, HUB)]
            reach, result = _timed(partial(memory.store.read, PLAN_CASCADE, keys=keys))
            reached = result[0]["rows"]
            raw, _ = _timed(partial(_run_query, memory, RAW_CASCADE, {"keys": keys}, 600))
            event = correct_event(f"perf-{run}")
            plan, _ = _timed(partial(memory.plan, event))
            if run == 1:  # uid reads idle, then during this repair (a reader process)
                idle = _idle_reads(memory, uids)[1]
                found = _uid_reads_during(
                    memory, uids, partial(memory.repair, event), memory.flush_embeddings
                )
                total, report, indexed = found.total, found.report, found.indexed
                reads.append((n, idle, found))
            else:
                total, report = _timed(partial(memory.repair, event))
                indexed, _ = _timed(memory.flush_embeddings)
            lags = memory.embedding_lags()
            floor = write_floor(memory, keys, run)
            row = PhaseRow(
                n,
                run,
                len(reached),
                len(report.selected),
                reach,
                plan,
                raw,
                dict(report.seconds),
                total,
                floor,
                indexed,
                _seconds_quantiles(lags),
            )
            rows.append(row)
            _print_phase_row(row, import_s if run == 1 else None)
        median = PhaseRow(
            n,
            0,
            int(_median([r.cascade for r in rows])),
            int(_median([r.selected for r in rows])),
            _median([r.reach for r in rows]),
            _median([r.plan for r in rows]),
            _median([r.raw for r in rows]),
            {p: _median([r.seconds.get(p, float("nan")) for r in rows]) for p in PHASES},
            _median([r.total for r in rows]),
            {step: _median([r.floor[step] for r in rows]) for step in FLOOR_STEPS},
            _median([r.indexed for r in rows]),
            (_median([r.searchable[0] for r in rows]), _median([r.searchable[1] for r in rows])),
        )
        _print_phase_row(median, None)
        steps = ", ".join(f"{step} {median.floor[step]:.3f}" for step in FLOOR_STEPS)
        print(f"{'':>9} floor steps (medians): {steps}")
        print(
            f"{'':>9} memory after n={n}: python peak RSS {_py_peak_mib():.0f} MiB; "
            f"server {_server_memory(memory)}"
        )
        if n == sizes[0]:
            trade = [_paced_repair(memory, uids, pace) for pace in paces]
        memory.clear()
    _print_uid_reads(reads)
    _print_pacing(sizes[0], trade)


def bench_floor_reads(base: MemoryStore, n: int, repeats: int, paces: Sequence[float]) -> None:
    """What the least writes of a repair cost serving reads, whoever writes them.

    The write floor (``write_floor``) at each pace, with the uid reader of the phases
    section: if even these writes, at the pace a repair within 1.5x of them needs, put
    uid-read p99 above 2x idle, no repair at that speed keeps reads within 2x on this
    machine. The engine's repair at pace 1 runs in the same repeat, for the ratio.
    """
    print(f"\n== floorreads: uid reads during the write floor, {n} artifacts ==")
    print(f"transactions of {base.settings.repair_batch} rows (MEMOREPAIR_REPAIR_BATCH)")
    memory = _fresh(f"perf-floorreads-{n}", base)
    register_noops(base)
    items = layered_memory(n)
    _import_embedded(memory, items)
    uids = [item.uid for item in items]
    del items
    keys = [artifact_key(memory.ns, HUB)]
    print(
        f"{'run':>3} {'writer':>12} {'seconds':>8} {'settle':>7} {'idle p99':>9} {'p99':>8} "
        f"{'ratio':>6}"
    )
    runs = itertools.count(100)  # the floor's event ids, apart from the phases section's
    rows: list[tuple[str, list[float], float]] = []
    for run in range(1, repeats + 1):
        for pace in paces:
            floor = partial(write_floor, memory, keys, next(runs), pace)
            rows.append(_floor_reads_row(memory, uids, run, f"floor {pace:g}", floor))
        repair = partial(memory.repair, correct_event(f"perf-floorreads-{run}"))
        rows.append(_floor_reads_row(memory, uids, run, "repair 1", repair))
        memory.flush_embeddings()
    print("ms; settle = seconds waited for the server to go idle (_settle), then idle = 3 s of")
    print("reads; p99 while the writer ran; floor = write_floor at the pace (rests after each")
    print("batch for what it took times (1 - pace) / pace)")
    _print_pooled_idle(rows)
    memory.clear()


def _print_pooled_idle(rows: Sequence[tuple[str, list[float], float]]) -> None:
    """Each writer's median p99 against the p99 of every idle window's reads pooled: one
    3 s window's p99 moves with the host far more than the writers' do."""
    pooled = _quantiles([s for _, idle, _ in rows for s in idle])[1]
    count = sum(len(idle) for _, idle, _ in rows)
    print(f"pooled idle p99 {pooled:.2f} ms over {count} reads; median p99 during, and ratio:")
    for tag in dict.fromkeys(tag for tag, _, _ in rows):
        p99 = _median([p for t, _, p in rows if t == tag])
        print(f"{tag:>16} {p99:8.2f} {p99 / pooled:6.2f}")


def _floor_reads_row(
    memory: MemoryStore, uids: Sequence[str], run: int, tag: str, write: Callable[[], Any]
) -> tuple[str, list[float], float]:
    """One writer with the reader: prints its row; (tag, idle reads' seconds, p99 ms)."""
    settled, idle = _idle_reads(memory, uids)
    found = _uid_reads_during(memory, uids, write)
    p99, idle99 = _quantiles(found.during)[1], _quantiles(idle)[1]
    print(
        f"{run:>3} {tag:>12} {found.total:8.2f} {settled:7.1f} "
        f"{idle99:9.2f} {p99:8.2f} {p99 / idle99:6.2f}"
    )
    return tag, idle, p99


def _idle_reads(memory: MemoryStore, uids: Sequence[str]) -> tuple[float, list[float]]:
    """The idle baseline: once the server has gone idle (the seconds that took), 3 s of
    uid reads (their seconds each)."""
    settled = _settle(memory)
    return settled, _durations(_uid_reads(memory, uids, lambda: time.sleep(3.0)))


def _settle(memory: MemoryStore, quiet: float = 0.05, most_s: float = 120.0) -> float:
    """Wait until the local server is idle: under `quiet` of a core over one second (its
    text index catches up after large writes, eventually consistent, and it checkpoints).
    An "idle" read baseline taken before that measures the server's own aftermath. Returns
    the seconds waited (a server elsewhere: a 5 s rest, its CPU not visible from here)."""
    pid = server_pid(memory)
    if pid is None:
        time.sleep(5.0)
        return 5.0
    started = time.monotonic()
    busy = cpu_seconds(pid)
    while busy is not None and time.monotonic() - started < most_s:
        time.sleep(1.0)
        now = cpu_seconds(pid)
        if now is None or now - busy < quiet:
            break
        busy = now
    return time.monotonic() - started


def server_pid(memory: MemoryStore) -> int | None:
    """The local server's process id (None: a server elsewhere, or not running)."""
    if not memory.settings.uses_local_server:
        return None
    from memorepair.local.server import LocalServer

    return LocalServer(memory.settings).status().pid


def cpu_seconds(pid: int) -> float | None:
    """User + system CPU seconds of a process so far (None: not readable here)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _import_embedded(memory: MemoryStore, items: list[ArtifactIn]) -> None:
    memory.import_items(items)
    memory.flush_embeddings()


def _uid_reads(
    memory: MemoryStore, uids: Sequence[str], during: Callable[[], Any]
) -> list[tuple[float, float]]:
    """(start, seconds) of each `retrieve(uid=...)` of random uids, one after another, by a
    reader in a child process of its own (as an agent would be: its own driver and
    interpreter, so the repair's Python work does not hold its GIL), for as long as
    `during()` runs. Starts are `time.monotonic()`, one clock for both processes."""
    ctx = multiprocessing.get_context("spawn")
    stop, ready, queue = ctx.Event(), ctx.Event(), ctx.Queue()
    child = ctx.Process(
        target=_uid_reader, args=(memory.settings, memory.ns, list(uids), stop, ready, queue)
    )
    child.start()
    ready.wait(120)
    try:
        during()
    finally:
        stop.set()
        reads: list[tuple[float, float]] = queue.get(timeout=120)
        child.join()
    return reads


def _durations(reads: Sequence[tuple[float, float]]) -> list[float]:
    return [seconds for _, seconds in reads]


def _uid_reader(settings: Any, ns: str, uids: list[str], stop: Any, ready: Any, queue: Any) -> None:
    reads: list[tuple[float, float]] = []
    rng = random.Random(7)
    parent = os.getppid()  # a bench killed mid-run must not leave its reader loading the server
    with open_store(ns=ns, settings=settings) as reader:
        reader.retrieve(uid=uids[0])  # connected and warm before the clock starts
        ready.set()
        while not stop.is_set() and os.getppid() == parent:
            uid = rng.choice(uids)
            started = time.monotonic()
            reader.retrieve(uid=uid)
            reads.append((started, time.monotonic() - started))
    queue.put(reads)


@dataclass
class DuringRepair:
    """One writer (a repair, a write floor) with a reader: its seconds, result and the
    reads' latencies (s) while it ran and while `after` ran (`indexed` seconds; a repair's
    deferred vectors)."""

    total: float
    report: Any
    during: list[float]
    tail: list[float]
    indexed: float


def _uid_reads_during(
    memory: MemoryStore,
    uids: Sequence[str],
    work: Callable[[], Any],
    after: Callable[[], Any] = lambda: None,
) -> DuringRepair:
    marks: dict[str, Any] = {}

    def timed() -> None:
        marks["start"] = time.monotonic()
        marks["report"] = work()
        marks["end"] = time.monotonic()
        after()
        marks["indexed"] = time.monotonic()

    reads = _uid_reads(memory, uids, timed)
    return DuringRepair(
        marks["end"] - marks["start"],
        marks["report"],
        [s for t, s in reads if marks["start"] <= t < marks["end"]],
        [s for t, s in reads if t >= marks["end"]],
        marks["indexed"] - marks["end"],
    )


def _paced_repair(
    memory: MemoryStore, uids: Sequence[str], pace: float
) -> tuple[float, list[float], DuringRepair]:
    """One more repair on the hub at MEMOREPAIR_REPAIR_PACE=`pace`, with uid reads idle and
    during it."""
    settings = memory.settings.model_copy(update={"repair_pace": pace})
    with open_store(ns=memory.ns, settings=settings) as paced:
        register_noops(paced)
        idle = _idle_reads(paced, uids)[1]
        repair = partial(paced.repair, correct_event(f"perf-pace-{pace:g}"))
        found = _uid_reads_during(paced, uids, repair, paced.flush_embeddings)
    return pace, idle, found


def _print_uid_reads(reads: Sequence[tuple[int, list[float], DuringRepair]]) -> None:
    print("\nuid reads (retrieve --uid, random uids, a reader process), run 1 of each size:")
    print("(issue 20 before: p99 125 ms during a repair against 51 ms idle)")
    print(
        f"{'artifacts':>9} {'idle p50':>9} {'idle p99':>9} {'rep p50':>8} {'rep p99':>8} "
        f"{'p99 ratio':>9} {'reads':>6} {'vec p99':>8} {'ratio':>6}"
    )
    for n, idle, found in reads:
        (i50, i99), (r50, r99) = _quantiles(idle), _quantiles(found.during)
        v99 = _quantiles(found.tail)[1]
        print(
            f"{n:>9} {i50:9.2f} {i99:9.2f} {r50:8.2f} {r99:8.2f} {r99 / i99:9.2f} "
            f"{len(found.during):>6} {v99:8.2f} {v99 / i99:6.2f}"
        )
    print("ms; idle = 3 s before the repair, once the server has gone idle (_settle); rep =")
    print("while memory.repair ran (the reader adds load); vec = after it, while its deferred")
    print("vectors were written")


def _print_pacing(n: int, trade: Sequence[tuple[float, list[float], DuringRepair]]) -> None:
    if not trade:
        return
    print(f"\npacing: repair time against uid-read p99, MEMOREPAIR_REPAIR_PACE, {n} artifacts")
    print("(one more repair of the hub per setting; the same reader process as above)")
    print(
        f"{'pace':>5} {'e2e s':>7} {'vectors':>7} {'idle p99':>9} {'rep p99':>8} {'ratio':>6} "
        f"{'vec p99':>8} {'ratio':>6}"
    )
    for pace, idle, found in trade:
        i99, r99 = _quantiles(idle)[1], _quantiles(found.during)[1]
        v99 = _quantiles(found.tail)[1]
        print(
            f"{pace:5.2f} {found.total:7.2f} {found.indexed:7.2f} {i99:9.2f} {r99:8.2f} "
            f"{r99 / i99:6.2f} {v99:8.2f} {v99 / i99:6.2f}"
        )


def _quantiles(seconds: Sequence[float]) -> tuple[float, float]:
    """p50 and p99 in milliseconds."""
    ordered = sorted(seconds) or [float("nan")]
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    return ordered[len(ordered) // 2] * 1e3, p99 * 1e3


def _seconds_quantiles(seconds: Sequence[float]) -> tuple[float, float]:
    """p50 and p99 in seconds."""
    p50, p99 = _quantiles(seconds)
    return p50 / 1e3, p99 / 1e3


def _print_phase_row(row: PhaseRow, import_s: float | None) -> None:
    run = "med" if row.run == 0 else str(row.run)
    imported = f"{import_s:7.2f}" if import_s is not None else f"{'':>7}"
    phases = " ".join(f"{row.seconds.get(p, float('nan')):7.3f}" for p in PHASES)
    print(
        f"{row.n:>9} {run:>3} {row.cascade:>7} {row.selected:>6} {imported} {row.reach:6.3f} "
        f"{row.plan:6.3f} {row.raw:6.3f} {phases} {row.total:7.2f} "
        f"{row.total / row.raw if row.raw else float('nan'):7.1f} "
        f"{row.floor_total:7.2f} {row.total / row.floor_total:7.1f} {row.indexed:7.2f} "
        f"{row.searchable[0]:6.1f} {row.searchable[1]:6.1f}"
    )


# ---- section: selection ---------------------------------------------------------------
def _child_seconds(fn: Callable[[], Any], cap: float) -> float | None:
    """Wall seconds of ``fn()`` in a forked child, or None when it ran past ``cap``."""
    ctx = multiprocessing.get_context("fork")
    queue: Any = ctx.Queue()

    def target() -> None:
        start = time.perf_counter()
        fn()
        queue.put(time.perf_counter() - start)

    process = ctx.Process(target=target, daemon=True)
    process.start()
    process.join(cap)
    if process.is_alive():
        process.kill()
        process.join()
        return None
    return float(queue.get(timeout=5)) if process.exitcode == 0 else None


def bench_selection(sizes: Sequence[int], repeats: int, cap: float, lam: float = 1.0) -> None:
    print("\n== selection: exact max-weight closure by one min-cut (selection_bench networks) ==")
    print(f"seconds; ortools median of {repeats}; igraph and networkx one run each in a child")
    print(f"process killed after {cap:.0f} s ('>cap'), and not tried at larger sizes after that;")
    print("e2e = select_mincut(backend='ortools') from the SelectionProblem, exact reductions")
    print("first; the backend columns solve the whole unreduced network (like for like)")
    print(
        f"{'n':>9} {'req arcs':>9} {'net arcs':>9} {'ortools':>8} {'e2e ort':>8} {'igraph':>8} "
        f"{'networkx':>9} {'ig/ort':>7} {'nx/ort':>7}"
    )
    sel.select_mincut(selection_bench.cascade_problem(100), lam, backend="ortools")  # warm-up
    alive = {"igraph": True, "networkx": True}
    for n in sizes:
        _selection_row(n, repeats, cap, lam, alive)


def _selection_row(n: int, repeats: int, cap: float, lam: float, alive: dict[str, bool]) -> None:
    problem = selection_bench.cascade_problem(n)
    network = selection_bench.network(problem, lam)[:6]
    ortools = partial(sel.BACKENDS["ortools"], *network)
    ort = _median([_timed(ortools)[0] for _ in range(repeats)])
    mincut = partial(sel.select_mincut, problem, lam, backend="ortools")
    e2e = _median([_timed(mincut)[0] for _ in range(repeats)])
    runners: dict[str, Callable[[], Any]] = {
        "igraph": partial(sel.BACKENDS["igraph"], *network),
        "networkx": partial(selection_bench.networkx_mask, *network),
    }
    cells: list[str] = []
    ratios: list[str] = []
    for name, fn in runners.items():
        seconds = _child_seconds(fn, cap) if alive[name] else None
        width = 8 if name == "igraph" else 9
        if seconds is None:
            cells.append(f"{'>cap' if alive[name] else '-':>{width}}")
            ratios.append(f"{'-':>7}")
            alive[name] = False
        else:
            cells.append(f"{seconds:{width}.3f}")
            ratios.append(f"{seconds / ort:7.1f}")
    print(
        f"{n:>9} {len(problem.requires):>9} {len(network[0]):>9} {ort:8.3f} {e2e:8.3f} "
        + " ".join(cells + ratios)
    )


# ---- section: reach -------------------------------------------------------------------
def bench_reach(base: MemoryStore, depths: Sequence[int], repeats: int, cap: float) -> None:
    print("\n== reach: pruning BFS vs path enumeration on diamond ladders ==")
    memory = _fresh("perf-reach", base)
    explain_params = {"keys": ["x"]}
    pruned_ops = _plan_operators(memory.store.explain(REACH_CASCADE, explain_params))
    naive_ops = _explain(memory, NAIVE_REACH, explain_params)
    print("barrier/reach_cascade plan: " + " <- ".join(pruned_ops))
    print("naive (no DISTINCT) plan:   " + " <- ".join(naive_ops))
    print(f"seconds; pruned median of {repeats}; naive one run, server timeout {cap:.0f} s")
    print(
        f"{'depth':>5} {'nodes':>6} {'paths':>22} {'pruned':>8} {'naive':>8} {'naive/pruned':>12}"
    )
    naive_on = True
    for depth in depths:
        root, items = diamond_ladder(depth, prefix=f"l{depth}-")
        memory.import_items(items)
        keys = [artifact_key(memory.ns, root)]
        times = []
        count = 0
        for _ in range(repeats):
            seconds, rows = _timed(partial(memory.store.read, REACH_CASCADE, keys=keys))
            times.append(seconds)
            count = len(rows)
        pruned = _median(times)
        naive_cell, ratio_cell = f"{'-':>8}", f"{'-':>12}"
        if naive_on:
            try:
                naive, rows = _timed(partial(_run_query, memory, NAIVE_REACH, {"keys": keys}, cap))
                naive_cell = f"{naive:8.3f}"
                ratio_cell = f"{naive / pruned:12.1f}"
                if naive > cap:
                    naive_on = False
            except DatabaseError:
                naive_cell, naive_on = f"{'>cap':>8}", False
        print(f"{depth:>5} {count:>6} {2**depth:>22} {pruned:8.4f} {naive_cell} {ratio_cell}")
    print("naive stops after its first run past the cap ('-' below it)")
    _clear_after_cap(memory)


def _clear_after_cap(memory: MemoryStore) -> None:
    """The server frees a timed-out enumeration's memory a little later; wait for it."""
    for attempt in range(20):
        try:
            memory.clear()
            return
        except DatabaseError as exc:
            if "MemoryPool" not in str(exc) or attempt == 19:
                raise
            time.sleep(1.0)


# ---- section: writes ------------------------------------------------------------------
def _write_items(n: int, prefix: str) -> list[ArtifactIn]:
    half = max(n // 2, 2)
    records = [
        ArtifactIn(uid=f"{prefix}r{i}", kind=Kind.RECORD, content=f"record {i}")
        for i in range(half)
    ]
    caches = [
        ArtifactIn(
            uid=f"{prefix}c{i}",
            kind=Kind.CACHE,
            content=f"cache {i}",
            recipe=_RECIPE,
            inputs=sorted({f"{prefix}r{i % half}", f"{prefix}r{(i * 7 + 1) % half}"}),
        )
        for i in range(n - half)
    ]
    return records + caches


def _record_each(memory: MemoryStore, items: list[ArtifactIn]) -> None:
    for item in items:
        memory.record(item)


def bench_record_latency(base: MemoryStore, n: int) -> None:
    """One `record` per call against a bare one-node write transaction, same run, with
    the embedding deferred (the default) and inline (inside the record's transaction)."""
    print("\n== record latency: one artifact per call vs a bare one-node write transaction ==")
    print("(issue 20 before: bare p50 1.20 ms / p99 5.20; record no inputs 11.02 / 39.79 = 9.2x;")
    print(" record 2 inputs 11.95 = 10x: three statements, a separate pre-read, embedding inline)")
    memory = _fresh("perf-record", base)
    inline_settings = base.settings.model_copy(update={"record_embedding": "inline"})
    store = memory.store
    text = "Ana prefers aisle seats on long flights and pays in CHF."
    with open_store(ns=memory.ns, settings=inline_settings) as inline:
        memory.record(ArtifactIn(uid="warm", kind=Kind.RECORD, content="warm up"))
        inline.record(ArtifactIn(uid="warm-i", kind=Kind.RECORD, content="warm up"))
        figures: list[tuple[str, tuple[float, float], float]] = []
        for mode, writer in (("deferred", memory), ("inline", inline)):
            # each mode interleaved with its own bare writes: the inline mode's vector
            # index work would slow a bare write measured beside the deferred mode
            found = _interleaved_latencies(
                [
                    (f"bare one-node write ({mode} run)", partial(_bare_write, store, text)),
                    (f"record, {mode} (no inputs)", _recorder(writer, mode, text, derived=False)),
                    (f"record, {mode} (2 inputs)", _recorder(writer, mode, text, derived=True)),
                ],
                n,
            )
            figures += [(name, q, found[0][1][0]) for name, q in found]
            writer.flush_embeddings()
    print(f"{'write':<34} {'p50 ms':>8} {'p99 ms':>8} {'p50/bare':>9}")
    for name, (p50, p99), bare in figures:
        print(f"{name:<34} {p50:8.2f} {p99:8.2f} {p50 / bare:9.2f}")
    print(
        f"{n} calls each, interleaved with the bare write of the same run; embeddings "
        f"{'on' if memory.settings.embeddings else 'off'}"
    )
    store.write(BARE_CLEAR)
    memory.clear()


def _bare_write(store: Any, text: str, i: int) -> object:
    return store.transaction(lambda tx: tx.run(BARE_WRITE, id=i, content=text))


def _interleaved_latencies(
    calls: Sequence[tuple[str, Callable[[int], object]]], n: int
) -> list[tuple[str, tuple[float, float]]]:
    """p50 and p99 (ms) of `n` calls of each, interleaved (call i of each in turn), so
    the other sessions' load on a shared machine weighs on every figure alike."""
    seconds: list[list[float]] = [[] for _ in calls]
    for i in range(n):
        for (_, call), spent in zip(calls, seconds, strict=True):
            started = time.perf_counter()
            call(i)
            spent.append(time.perf_counter() - started)
    return [(name, _quantiles(spent)) for (name, _), spent in zip(calls, seconds, strict=True)]


def _recorder(
    writer: MemoryStore, mode: str, text: str, *, derived: bool
) -> Callable[[int], object]:
    """Call i records `{mode}-p{i}`, or `{mode}-d{i}` derived from it and `warm`."""

    def call(i: int) -> object:
        if not derived:
            return writer.record(ArtifactIn(uid=f"{mode}-p{i}", kind=Kind.RECORD, content=text))
        inputs = [f"{mode}-p{i}", "warm"]
        item = ArtifactIn(uid=f"{mode}-d{i}", kind=Kind.SUMMARY, content=text, inputs=inputs)
        return writer.record(item)

    return call


def bench_writes(base: MemoryStore, n: int, repeats: int) -> None:
    print("\n== writes: batched (UNWIND $rows, record_many) vs row by row (record) ==")
    print("(issue 20 before: batched 666 rows/s, row by row 77 rows/s, at 2000 artifacts)")
    memory = _fresh("perf-writes", base)
    batched_runs: list[float] = []
    embedded_runs: list[float] = []
    row_runs: list[float] = []
    for run in range(repeats):  # each run writes new uids into the same namespace
        items = _write_items(n, f"b{run}-")
        started = time.perf_counter()
        memory.record_many(items)
        batched_runs.append(time.perf_counter() - started)
        memory.flush_embeddings()
        embedded_runs.append(time.perf_counter() - started)
        row_runs.append(_timed(partial(_record_each, memory, _write_items(n, f"s{run}-")))[0])
        memory.flush_embeddings()
    batched, embedded = _median(batched_runs), _median(embedded_runs)
    row_by_row = _median(row_runs)
    print(
        f"{'artifacts':>9} {'batched s':>10} {'rows/s':>9} {'+emb rows/s':>11} "
        f"{'row-by-row s':>13} {'rows/s':>9} {'ratio':>6}"
    )
    print(
        f"{n:>9} {batched:10.3f} {n / batched:9.0f} {n / embedded:11.0f} {row_by_row:13.3f} "
        f"{n / row_by_row:9.0f} {row_by_row / batched:6.1f}"
    )
    print(
        f"medians of {repeats}; runs batched {', '.join(f'{t:.3f}' for t in batched_runs)} s, "
        f"row by row {', '.join(f'{t:.2f}' for t in row_runs)} s; +emb: until the deferred "
        "embeddings are written too"
    )
    print(f"half records, half caches with 2 inputs each; batch size {memory.settings.batch_size}")
    memory.clear()


def bench_batch_api(base: MemoryStore, n: int, repeats: int) -> None:
    """`record_many` at scale: plain records (what an agent batches) and the mixed memory."""
    print("\n== batch API: record_many, artifacts/s (target: >= 20k/s in batches) ==")
    memory = _fresh("perf-batch", base)
    print(f"{'items':<28} {'artifacts':>9} {'recorded/s':>10} {'+emb/s':>8}")
    for name, build in (
        ("records, no inputs", _plain_items),
        ("half caches with 2 inputs", _write_items),
    ):
        recorded: list[float] = []
        embedded: list[float] = []
        for run in range(repeats):
            items = build(n, f"{name[:1]}{run}-")
            started = time.perf_counter()
            memory.record_many(items)
            recorded.append(time.perf_counter() - started)
            memory.flush_embeddings()
            embedded.append(time.perf_counter() - started)
        print(f"{name:<28} {n:>9} {n / _median(recorded):10.0f} {n / _median(embedded):8.0f}")
    print(
        f"medians of {repeats}; one transaction up to {memory.settings.import_tx_items} items, "
        f"in statements of {memory.settings.batch_size}; "
        "recorded = committed, served and text-searchable; +emb = deferred embeddings written"
    )
    memory.clear()


def _plain_items(n: int, prefix: str) -> list[ArtifactIn]:
    return [
        ArtifactIn(uid=f"{prefix}{i}", kind=Kind.RECORD, content=f"note {i}: pays in CHF")
        for i in range(n)
    ]


# ---- entry point ----------------------------------------------------------------------
def _sizes(text: str) -> list[int]:
    return [int(float(part)) for part in text.split(",") if part.strip()]


def main(argv: list[str] | None = None) -> int:
    parser = bench_args.parser("python -m bench.perf", __doc__)
    parser.add_argument(
        "--only", default=",".join(SECTIONS), help="sections to run (default: %(default)s)"
    )
    parser.add_argument(
        "--sizes", default="1e3,1e4,1e5", help="phases: artifact counts (default: %(default)s)"
    )
    parser.add_argument(
        "--repeats", type=int, default=3, help="runs per figure, medians quoted (default: 3)"
    )
    parser.add_argument(
        "--paces",
        default="1,0.5,0.25",
        help="phases: MEMOREPAIR_REPAIR_PACE settings of the pacing trade, on the first size "
        "(default: %(default)s; empty: none)",
    )
    parser.add_argument(
        "--floor-paces",
        default="1,0.67,0.5",
        help="floorreads: paces of the write floor, on the first size (default: %(default)s)",
    )
    parser.add_argument(
        "--selection-sizes",
        default="1e3,1e4,1e5,1e6",
        help="selection: candidate counts (default: %(default)s)",
    )
    parser.add_argument(
        "--solver-cap", type=float, default=60.0, help="selection: igraph/networkx cap, s"
    )
    parser.add_argument(
        "--depths",
        default="4,8,12,16,20,24,28,40,80,160",
        help="reach: diamond ladder depths (default: %(default)s)",
    )
    parser.add_argument(
        "--naive-cap", type=float, default=20.0, help="reach: path enumeration cap, s"
    )
    parser.add_argument(
        "--write-n", type=int, default=2000, help="writes: artifacts per method (default: 2000)"
    )
    parser.add_argument(
        "--batch-n",
        type=int,
        default=20_000,
        help="writes: artifacts per record_many run (default: 20000)",
    )
    args = parser.parse_args(argv)
    only = {s.strip() for s in args.only.split(",")}
    unknown = only - set(SECTIONS)
    if unknown:
        parser.error(f"unknown sections {sorted(unknown)}; choose from {', '.join(SECTIONS)}")

    print(f"bench perf: {os.cpu_count()} cpus, repeats {args.repeats}")
    if "selection" in only:
        bench_selection(_sizes(args.selection_sizes), args.repeats, args.solver_cap)
    if only & {"phases", "reach", "writes", "floorreads"}:
        with open_store(ns="perf") as base:
            base.apply_schema()
            print(f"server {base.store.verify()} at {base.store.uri}")
            if "reach" in only:
                bench_reach(base, _sizes(args.depths), args.repeats, args.naive_cap)
            if "writes" in only:
                bench_writes(base, args.write_n, args.repeats)
                bench_record_latency(base, min(args.write_n, 500))
                bench_batch_api(base, args.batch_n, args.repeats)
            if "phases" in only:
                paces = [float(p) for p in args.paces.split(",") if p.strip()]
                bench_phases(base, _sizes(args.sizes), args.repeats, paces)
            if "floorreads" in only:
                paces = [float(p) for p in args.floor_paces.split(",") if p.strip()]
                bench_floor_reads(base, _sizes(args.sizes)[0], args.repeats, paces)
    print(f"\npython peak RSS {_py_peak_mib():.0f} MiB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
