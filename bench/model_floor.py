"""A lower write floor, decided by measurement: today's model beside the identity model.

A benchmark only (the engine is unchanged). Run it as
``python -m bench.model_floor`` against the configured Neo4j (``make bench``'s server).

Today's model keeps one ``:Artifact`` node per version, with ``INFLUENCES`` edges between
versions, so a republish writes each successor's influence edges again. The **identity
model** keeps one ``:Artifact`` node per version too (same labels, same visibility, same
event edges, same serving queries), but holds the influence edges between ``:Identity``
nodes, one per uid, and records on each version the version of each input it read
(``reads``, integers aligned with ``inputs``). A republish writes the new version, its
``SUPERSEDES`` edge and its ``reads``; it writes influence edges only where who reads whom
changes (a dropped input: the edge goes; an input republished while its reader is not:
the edge turns ``INFLUENCED``, which the reach does not follow, like today's edge from a
superseded version). docs/identity-model.md has the design, docs/decisions.md (decision
16) the figures and the decision.

For each ``--sizes`` artifact count, the layered memory of ``bench.perf`` is imported
twice, once per model, into two namespaces of the same server; then ``--repeats`` times,
on the hub's cascade, alternating which model goes first:

``reach``    C(F) from the hub: ``reach_cascade`` (today) and ``model_reach`` (identity),
             wall and CPU seconds, checked to return the same uids and planned as the
             pruning BFS;
``serving``  ``retrieve(uid=...)`` p50/p99 over ``--uid-reads`` uids and
             ``retrieve(text=...)`` p50 over ``--text-reads`` substrings, per model;
``floor``    today: ``bench.perf.write_floor``; identity: ``republish`` (read, order,
             withdraw, WITHDREW edges, new versions with ``reads`` + SUPERSEDES, influence
             edges that changed); wall seconds per step and CPU seconds of the server and
             this process per floor (the machine is shared: wall times move with other
             people's load, CPU seconds much less); ``edge reads`` is what recording the
             version read on each influence edge instead would add (not in the floor);
``audit``    after both floors, the event's withdrawn/published/removed sets, the lineage
             of ``--lineage-sample`` uids, the barrier invariant (stale-served) and the
             reach are read back from each model with its own Cypher and compared
             (``audit_differences``); the identity graph is checked against the versions'
             ``reads``. Any difference is printed and the program exits 1.

Takes about 45 minutes for the defaults on 2 busy cores (imports 1-3 min per model and
size); the two namespaces are cleared at the end of each size.
"""

from __future__ import annotations

import os
import random
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from bench import args as bench_args
from bench.perf import (
    BENCH_CYPHER,
    FLOOR_EVENT,
    FLOOR_STEPS,
    FLOOR_WITHDRAW,
    FLOOR_WITHDREW,
    HUB,
    REACH_CASCADE,
    _fresh,
    _median,
    _plan_operators,
    _py_peak_mib,
    _server_memory,
    _timed,
    cpu_seconds,
    layered_memory,
    server_pid,
    write_floor,
)
from memorepair import queries
from memorepair.api import MemoryStore, open_store
from memorepair.codec import canonical_json
from memorepair.graphs import topological
from memorepair.model import ArtifactIn, artifact_key, version_id
from memorepair.queries import Query


def _query(name: str) -> Query:
    return queries.named(name, root=BENCH_CYPHER, label="bench/cypher")


MODEL_SCHEMA = _query("model_schema_identity")
MODEL_IMPORT = _query("model_import")
MODEL_REACH = _query("model_reach")
MODEL_RAW_CASCADE = _query("model_raw_cascade")
MODEL_HEADS = _query("model_heads")
MODEL_CURRENT_CHILDREN = _query("model_current_children")
MODEL_MAX_VERSIONS = _query("model_max_versions")
MODEL_STAGE = _query("model_stage")
MODEL_SUCCESSORS = _query("model_successors")
MODEL_RELINK = _query("model_relink")
MODEL_EDGE_READS = _query("model_edge_reads")
MODEL_WITHDREW = _query("model_withdrew")
MODEL_PUBLISHED = _query("model_published")
MODEL_CLOSE = _query("model_close")
MODEL_EVENT_OUTCOMES = _query("model_event_outcomes")
MODEL_LINEAGE = _query("model_lineage")
MODEL_STALE_SERVED = _query("model_stale_served")
MODEL_IDENTITY_CHECK = _query("model_identity_check")
#: Today's audit queries, unchanged (the identity model keeps event edges as they are).
EVENT_SETS = queries.load("audit/event_sets")
LINEAGE = queries.load("audit/lineage")
STALE_SERVED = queries.load("audit/stale_served")

#: The identity model's floor steps (``republish``), beside today's ``FLOOR_STEPS``.
MODEL_STEPS = ("read", "order", "withdraw", "withdrew", "successors", "lineage")
#: Outcomes whose uid gets a new version, and those that end removed.
REPUBLISHED = frozenset({"published", "root_replaced"})
REMOVED = frozenset({"removed", "root_deleted"})
PRUNING = "VarLengthExpand(Pruning"


def apply_identity_schema(memory: MemoryStore) -> None:
    """The engine's schema plus the identity model's one constraint (Identity.key)."""
    memory.apply_schema()
    memory.store.write(MODEL_SCHEMA)


def _chunks(values: Sequence[Any], size: int) -> list[list[Any]]:
    return [list(values[i : i + size]) for i in range(0, len(values), size)]


def _key_of(vid: str) -> str:
    return vid.rpartition("@")[0]


# ---- import ---------------------------------------------------------------------------
def _import_row(ns: str, artifact: ArtifactIn) -> dict[str, Any]:
    return {
        "vid": version_id(ns, artifact.uid, 1),
        "key": artifact_key(ns, artifact.uid),
        "uid": artifact.uid,
        "version": 1,
        "kind": artifact.kind.value,
        "arch": artifact.arch.value if artifact.arch else None,
        "content": artifact.content,
        "value": artifact.value,
        "repair_cost": artifact.repair_cost,
        "recipe": canonical_json(artifact.recipe.model_dump() if artifact.recipe else None),
        "meta": canonical_json(artifact.meta),
        "inputs": list(artifact.inputs),
        "reads": [1 for _ in artifact.inputs],
        "input_keys": [artifact_key(ns, u) for u in artifact.inputs],
    }


def import_identity_model(memory: MemoryStore, items: Sequence[ArtifactIn]) -> int:
    """Write ``items`` as first versions of the identity model, inputs first, in batches.

    A bench importer (no locking of inputs, no late arrivals: the namespace is new).
    """
    by_uid = {a.uid: a for a in items}
    order, cyclic = topological(list(by_uid), [(u, a.uid) for a in items for u in a.inputs])
    if cyclic:
        raise ValueError(f"identity import: {len(cyclic)} artifacts lie on an input cycle")
    rows = [_import_row(memory.ns, by_uid[uid]) for uid in order]
    for batch in _chunks(rows, memory.settings.batch_size):
        memory.store.write(MODEL_IMPORT, ns=memory.ns, rows=batch)
    return len(rows)


# ---- republish ------------------------------------------------------------------------
@dataclass(frozen=True)
class Fate:
    """What an event did to one uid of its cascade: the outcome the engine recorded and,
    when it got a new version, that version's inputs (uids, in order)."""

    outcome: str
    inputs: tuple[str, ...] = ()
    root: bool = False
    staged: bool = False


@dataclass
class Plan:
    """One republish worked out from the cascade read: rows in input-first order."""

    rows: dict[str, dict[str, Any]]
    order: list[str]
    fates: dict[str, Fate]
    #: Key -> its current version's number (updated as successors are written).
    heads: dict[str, int] = field(default_factory=dict)
    #: Removed versions the reach passed through (never republished).
    passed: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: The number of each key's next version (the highest written so far plus one).
    versions: dict[str, int] = field(default_factory=dict)

    def republished(self, key: str) -> bool:
        return key in self.fates and self.fates[key].outcome in REPUBLISHED


def event_fates(memory: MemoryStore, event_id: str) -> dict[str, Fate]:
    """The fates an engine event gave its cascade in today's model, by key of ``memory``."""
    rows = memory.store.read(MODEL_EVENT_OUTCOMES, key=f"{memory.ns}/{event_id}")
    return {
        r["uid"]: Fate(
            r["outcome"] or "open", tuple(r["inputs"] or ()), bool(r["root"]), bool(r["staged"])
        )
        for r in rows
    }


def _plan(
    memory: MemoryStore, rows: list[dict[str, Any]], fates: Mapping[str, Fate] | None
) -> Plan:
    by_key = {_key_of(r["vid"]): r for r in rows if not r["removed"]}
    ns = memory.ns
    links = [
        (artifact_key(ns, u), key)
        for key, r in by_key.items()
        for u in r["inputs"] or ()
        if artifact_key(ns, u) in by_key
    ]
    order, cyclic = topological(list(by_key), links)
    if cyclic:
        raise RuntimeError(f"republish: {len(cyclic)} cascade versions lie on a cycle")
    if fates is None:  # the floor: every version republished with the inputs it has
        chosen = {k: Fate("published", tuple(r["inputs"] or ())) for k, r in by_key.items()}
    else:
        chosen = {artifact_key(ns, uid): fate for uid, fate in fates.items()}
        if set(chosen) != set(by_key):
            raise RuntimeError(
                f"republish: the identity model's cascade differs from the event's: "
                f"{len(set(by_key) - set(chosen))} extra, {len(set(chosen) - set(by_key))} "
                "missing"
            )
    heads = {k: _version_of(r["vid"]) for k, r in by_key.items()}
    versions = {k: v + 1 for k, v in heads.items()}
    passed = {_key_of(r["vid"]): r for r in rows if r["removed"]}
    return Plan(by_key, order, chosen, heads, passed, versions)


def _replay_reads(memory: MemoryStore, plan: Plan) -> None:
    """What the floor can take from the cascade read but an event replay must look up:
    the current versions of inputs whose edge says they moved on, and the next version
    numbers after attempts that were staged but never published."""
    versions = memory.store.read(MODEL_MAX_VERSIONS, keys=list(plan.rows))
    plan.versions.update({r["key"]: int(r["version"]) + 1 for r in versions})
    wanted: set[str] = set()
    for key, row in plan.rows.items():
        if not plan.republished(key):
            continue
        known = set(_read_map(memory.ns, row)) - set(row["behind"])
        wanted |= {
            k
            for u in plan.fates[key].inputs
            if (k := artifact_key(memory.ns, u)) not in plan.rows and k not in known
        }
    for found in memory.store.read(MODEL_HEADS, keys=sorted(wanted)) if wanted else ():
        plan.heads[found["key"]] = _version_of(found["vid"])


def _version_of(vid: str) -> int:
    return int(vid.rpartition("@")[2])


def _read_map(ns: str, row: Mapping[str, Any]) -> dict[str, int]:
    """Input key -> the version of it that ``row``'s version read."""
    return {
        artifact_key(ns, uid): version
        for uid, version in zip(row["inputs"] or (), row["reads"] or (), strict=True)
    }


def _reads_of(plan: Plan, ns: str, key: str) -> list[int]:
    """The versions the new version of ``key`` reads: its inputs' current versions."""
    old = _read_map(ns, plan.rows[key])
    reads = []
    for uid in plan.fates[key].inputs:
        k = artifact_key(ns, uid)
        version = plan.heads.get(k) or old.get(k)
        if version is None:
            raise RuntimeError(f"republish: {key} reads {k}, whose current version is unknown")
        reads.append(version)
    return reads


def _successor_rows(plan: Plan, ns: str, batch: list[str]) -> list[dict[str, Any]]:
    rows = []
    for key in batch:
        if not plan.republished(key):
            continue
        row: dict[str, Any] = {
            "vid": plan.rows[key]["vid"],
            "version": plan.versions[key],
            "inputs": list(plan.fates[key].inputs),
            "reads": _reads_of(plan, ns, key),
        }
        rows.append(row)
        plan.heads[key] = plan.versions[key]
    return rows


def _relink_rows(plan: Plan, ns: str) -> list[dict[str, Any]]:
    """Influence edges whose meaning changes: the only ones the identity model writes."""
    rows: list[dict[str, Any]] = []
    for key, row in (plan.rows | plan.passed).items():
        before = set(_read_map(ns, row))
        if plan.republished(key):
            after = {artifact_key(ns, u) for u in plan.fates[key].inputs}
            rows += [{"src": k, "dst": key, "link": "drop"} for k in sorted(before - after)]
            moved = (after - before) | (after & set(row["behind"]))
            rows += [{"src": k, "dst": key, "link": "current"} for k in sorted(moved)]
        else:  # still reads the old version of any input republished now
            left = {k for k in before if k in plan.rows and plan.republished(k)}
            left -= set(row["behind"])
            rows += [{"src": k, "dst": key, "link": "behind"} for k in sorted(left)]
    return rows


def _withdrew(memory: MemoryStore, plan: Plan, event_key: str, floor: bool) -> None:
    memory.store.write(FLOOR_EVENT, key=event_key, ns=memory.ns, id=event_key.split("/", 1)[1])
    for batch in _chunks(plan.order, memory.settings.repair_batch):
        vids = [plan.rows[k]["vid"] for k in batch]
        if floor:
            memory.store.write(FLOOR_WITHDREW, key=event_key, vids=vids)
            continue
        rows = [
            {
                "vid": plan.rows[k]["vid"],
                "outcome": plan.fates[k].outcome,
                "root": plan.fates[k].root,
            }
            for k in batch
        ]
        memory.store.write(MODEL_WITHDREW, key=event_key, rows=rows)


def republish(
    memory: MemoryStore,
    keys: list[str],
    event_id: str,
    fates: Mapping[str, Fate] | None = None,
    *,
    edge_reads: bool = False,
    cpu: Callable[[], float] | None = None,
) -> dict[str, float]:
    """Seconds per step (``MODEL_STEPS``, plus ``edge_reads`` when asked) of one repair's
    writes in the identity model, on the cascade of ``keys``.

    ``cpu`` (a CPU-seconds clock) also times the ``edge_reads`` variant in CPU seconds
    (``edge_reads_cpu``), so a caller timing the whole call can take it out.

    ``fates=None`` is the write floor, the counterpart of ``bench.perf.write_floor``:
    every cascade version republished with its inputs, nothing else written. With the
    ``fates`` of an engine event (``event_fates``), the event is replayed: outcomes on the
    WITHDREW edges, PUBLISHED edges, removed and still-withdrawn versions closed as the
    engine does, so the two models' audits can be compared.
    """
    seconds: dict[str, float] = {}
    seconds["read"], rows = _timed(partial(memory.store.read, MODEL_RAW_CASCADE, keys=keys))
    start = time.perf_counter()
    plan = _plan(memory, rows, fates)
    if fates is not None:
        _replay_reads(memory, plan)
    seconds["order"] = time.perf_counter() - start
    event_key = f"{memory.ns}/{event_id}"
    size = memory.settings.repair_batch
    batches = _chunks(plan.order, size)

    def withdraw() -> None:
        for batch in batches:
            memory.store.write(FLOOR_WITHDRAW, vids=[plan.rows[k]["vid"] for k in batch])

    seconds["withdraw"], _ = _timed(withdraw)
    seconds["withdrew"], _ = _timed(partial(_withdrew, memory, plan, event_key, fates is None))
    seconds["successors"], written = _write_successors(memory, plan, batches)
    relinks = _relink_rows(plan, memory.ns)
    seconds["lineage"], _ = _timed(partial(_write_rows, memory, MODEL_RELINK, relinks))
    expected = sum(1 for k in plan.order if plan.republished(k))
    if written != expected:  # a floor that skipped work would flatter
        raise RuntimeError(f"republish wrote {written} versions; expected {expected}")
    if edge_reads:
        seconds.update(_edge_reads_step(memory, plan, cpu))
    if fates is not None:
        _close(memory, plan, event_key)
    return seconds


def _write_successors(
    memory: MemoryStore, plan: Plan, batches: list[list[str]]
) -> tuple[float, int]:
    """Seconds in the write statements (rows are built between them, untimed, like
    write_floor's influence rows) and versions written."""
    seconds, written = 0.0, 0
    for batch in batches:
        rows = _successor_rows(plan, memory.ns, batch)
        if rows:
            took, result = _timed(partial(memory.store.write, MODEL_SUCCESSORS, rows=rows))
            seconds += took
            written += result[0]["written"]
    return seconds, written


def _write_rows(
    memory: MemoryStore, query: Query, rows: list[dict[str, Any]], **fixed: Any
) -> None:
    for batch in _chunks(rows, memory.settings.repair_batch):
        memory.store.write(query, rows=batch, **fixed)


def _edge_reads_step(
    memory: MemoryStore, plan: Plan, cpu: Callable[[], float] | None
) -> dict[str, float]:
    """The variant's wall seconds, and its CPU seconds when a clock is given."""
    start_cpu = cpu() if cpu else 0.0
    step = {"edge_reads": _timed(partial(_write_edge_reads, memory, plan))[0]}
    if cpu:
        step["edge_reads_cpu"] = cpu() - start_cpu
    return step


def _write_edge_reads(memory: MemoryStore, plan: Plan) -> None:
    """The variant: the version read recorded on each influence edge into a new version."""
    rows = []
    for key in plan.order:
        if plan.republished(key):
            reads = _reads_of(plan, memory.ns, key)
            inputs = [artifact_key(memory.ns, u) for u in plan.fates[key].inputs]
            rows.append({"key": key, "read_of": dict(zip(inputs, reads, strict=True))})
    _write_rows(memory, MODEL_EDGE_READS, rows)


def _close(memory: MemoryStore, plan: Plan, event_key: str) -> None:
    published = [f"{k}@{plan.heads[k]}" for k in plan.order if plan.republished(k)]
    for batch in _chunks(published, memory.settings.repair_batch):
        memory.store.write(MODEL_PUBLISHED, key=event_key, vids=batch)
    staged = [
        {"vid": plan.rows[k]["vid"], "version": plan.versions[k]}
        for k in plan.order
        if plan.fates[k].staged and not plan.republished(k)
    ]
    _write_rows(memory, MODEL_STAGE, staged, key=event_key)
    rows = [
        {
            "vid": plan.rows[k]["vid"],
            "removed": plan.fates[k].outcome in REMOVED,
            "erase": plan.fates[k].outcome == "root_deleted",
        }
        for k in plan.order
        if not plan.republished(k)
    ]
    _write_rows(memory, MODEL_CLOSE, rows, key=event_key)


# ---- audit: the same answers from both models -----------------------------------------
def _event_sets(memory: MemoryStore, event_id: str) -> dict[str, list[tuple[Any, ...]]]:
    """Outcome -> sorted (uid, version, kind, successor version): what the event did.

    Mode and reason are the engine's candidate facts, stored alike by both models, and the
    replay copies no such field, so they are left out of the comparison.
    """
    rows = memory.store.read(EVENT_SETS, ns=memory.ns, event=event_id)
    return {
        r["outcome"]: sorted(
            (a["uid"], a["version"], a["kind"], a["successor"]) for a in r["artifacts"]
        )
        for r in rows
    }


def _lineage(memory: MemoryStore, query: Query, uid: str) -> list[tuple[Any, ...]]:
    rows = memory.store.read(query, ns=memory.ns, uid=uid)
    return [
        (
            r["version"],
            r["visibility"],
            r["kind"],
            tuple(sorted(r["inputs"])),
            tuple(sorted((w["event"] or "", w["outcome"] or "") for w in r["withdrawn_by"])),
            r["published_by"],
            r["erased"],
        )
        for r in rows
    ]


def _uids(memory: MemoryStore, rows: Iterable[Mapping[str, Any]]) -> set[str]:
    prefix = f"{memory.ns}/"
    return {str(r["key"]).removeprefix(prefix) for r in rows}


def reach_uids(memory: MemoryStore, query: Query, uid: str) -> set[str]:
    """C(F) of one root as uids, by ``reach_cascade`` (today) or ``model_reach``."""
    return _uids(memory, memory.store.read(query, keys=[artifact_key(memory.ns, uid)]))


def current_path_reach(memory: MemoryStore, uid: str) -> set[str]:
    """Today's C(F) of one root restricted to paths of current versions, level by level."""
    heads = memory.store.read(MODEL_HEADS, keys=[artifact_key(memory.ns, uid)])
    frontier = [r["vid"] for r in heads]
    seen = set(frontier)
    reached = {r["key"] for r in heads}
    removed = {r["key"] for r in heads if r["removed"]}  # passed through, never returned
    while frontier:
        rows = memory.store.read(MODEL_CURRENT_CHILDREN, vids=frontier)
        frontier = [r["vid"] for r in rows if r["vid"] not in seen]
        seen.update(frontier)
        reached |= {r["key"] for r in rows}
        removed |= {r["key"] for r in rows if r["removed"]}
    return _uids(memory, [{"key": k} for k in reached - removed])


def reach_differences(today: MemoryStore, alt: MemoryStore, root: str) -> list[str]:
    """How the identity model's C(F) of ``root`` departs from today's, beyond the one
    documented difference.

    Today's reach also passes through superseded versions, and so also takes over current
    versions that an earlier event left withdrawn and that only an old version leads to;
    the identity model's reach follows current versions only. So: the identity model's
    reach must equal today's restricted to current-version paths, and what today's
    reaches besides must all be out of serving (decision 2: a superseded version leads
    only to versions of an earlier cascade).
    """
    full = reach_uids(today, REACH_CASCADE, root)
    current = current_path_reach(today, root)
    identity = reach_uids(alt, MODEL_REACH, root)
    found = []
    if identity != current:
        found.append(
            f"reach {root}: only today's current paths {sorted(current - identity)[:10]}, "
            f"only identity {sorted(identity - current)[:10]}"
        )
    if not current <= full:
        found.append(f"reach {root}: current paths outside today's reach {sorted(current - full)}")
    history = [artifact_key(today.ns, u) for u in sorted(full - current)]
    served = [r["key"] for r in today.store.read(MODEL_HEADS, keys=history) if r["live"]]
    if served:
        found.append(f"reach {root}: served versions reached only through superseded ones {served}")
    return found


def audit_differences(
    today: MemoryStore,
    alt: MemoryStore,
    events: Sequence[str],
    uids: Sequence[str],
    roots: Sequence[str] = (),
) -> list[str]:
    """Every way the identity model's audit answers differ from today's (empty: none).

    Each model answers with its own Cypher: today's ``cypher/audit`` files, the identity
    model's ``bench/cypher/model_*``. Compared: each event's sets by outcome, the lineage
    of each uid (versions, visibility, inputs with their versions, events), the barrier
    invariant (both must be empty), the identity graph against the versions' ``reads``
    (must be empty), and the reach of each root (``reach_differences``).
    """
    found: list[str] = []
    for event in events:
        mine, theirs = _event_sets(today, event), _event_sets(alt, event)
        if mine != theirs:
            found.append(
                f"event {event}: sets differ: today {_brief(mine)}, identity {_brief(theirs)}"
            )
    for uid in uids:
        mine_l, theirs_l = _lineage(today, LINEAGE, uid), _lineage(alt, MODEL_LINEAGE, uid)
        if mine_l != theirs_l:
            found.append(f"lineage {uid}: today {mine_l} identity {theirs_l}")
    found += [f"stale-served (today): {r}" for r in today.store.read(STALE_SERVED, ns=today.ns)]
    found += [
        f"stale-served (identity): {r}" for r in alt.store.read(MODEL_STALE_SERVED, ns=alt.ns)
    ]
    found += [f"identity graph: {r}" for r in alt.store.read(MODEL_IDENTITY_CHECK, ns=alt.ns)]
    for root in roots:
        found += reach_differences(today, alt, root)
    return found


def _brief(sets: Mapping[str, list[tuple[Any, ...]]]) -> str:
    return ", ".join(f"{outcome} {len(rows)}" for outcome, rows in sorted(sets.items()))


# ---- the benchmark --------------------------------------------------------------------
MODELS = ("today", "identity")


@dataclass
class Options:
    repeats: int
    uid_reads: int
    text_reads: int
    lineage_sample: int


@dataclass
class Run:
    """One repeat at one size: seconds (reads in ms) per model, and the differences."""

    n: int
    run: int
    cascade: int
    reach: dict[str, float]
    uid_p50: dict[str, float]
    uid_p99: dict[str, float]
    text_p50: dict[str, float]
    stale: dict[str, float]
    today_floor: dict[str, float]
    model_floor: dict[str, float]
    #: CPU seconds (server + client) of the reach query and of each floor.
    reach_cpu: dict[str, float]
    floor_cpu: dict[str, float]
    differences: list[str]

    @property
    def floor(self) -> dict[str, float]:
        model = sum(self.model_floor[s] for s in MODEL_STEPS)
        return {"today": sum(self.today_floor.values()), "identity": model}


@dataclass
class Pair:
    """The same memory in both models, and what the runs read from it."""

    today: MemoryStore
    alt: MemoryStore
    uids: list[str]
    texts: list[str]
    lineage: list[str]
    cpu: Callable[[], float]

    def of(self, model: str) -> MemoryStore:
        return self.today if model == "today" else self.alt


def cpu_clock(memory: MemoryStore) -> Callable[[], float]:
    """CPU seconds used so far by the local server plus this process.

    The machine is shared: wall times move with other people's load (2-3x here), CPU
    seconds much less, and the server serves only this benchmark. Without a local server
    the clock counts this process only (NaN would hide that the floor was measured).
    """
    pid = server_pid(memory)

    def clock() -> float:
        server = cpu_seconds(pid) if pid is not None else None
        return (server or 0.0) + time.process_time()

    return clock


def _ms_quantile(values: list[float], q: int) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, (len(ordered) * q) // 100)] * 1000


def _serving(memory: MemoryStore, pair: Pair) -> tuple[list[float], list[float], list[Any]]:
    """Seconds of each uid read and each substring read, and what the uid reads served."""
    uid_s, text_s, served = [], [], []
    for uid in pair.uids:
        took, found = _timed(partial(memory.retrieve, uid=uid))
        uid_s.append(took)
        served.append([(a.uid, a.version, a.content) for a in found])
    for text in pair.texts:
        text_s.append(_timed(partial(memory.retrieve, text=text, limit=20))[0])
    return uid_s, text_s, served


def _reach(pair: Pair, model: str) -> tuple[float, float, set[str]]:
    """Wall and CPU seconds of C(F) from the hub, and the uids."""
    query = REACH_CASCADE if model == "today" else MODEL_REACH
    start = pair.cpu()
    took, reached = _timed(partial(reach_uids, pair.of(model), query, HUB))
    return took, pair.cpu() - start, reached


def _floor(pair: Pair, model: str, run: int) -> tuple[dict[str, float], float]:
    """Seconds per step of one floor, and its CPU seconds (the variant taken out)."""
    start = pair.cpu()
    if model == "today":
        steps = write_floor(pair.today, [artifact_key(pair.today.ns, HUB)], run)
    else:
        keys = [artifact_key(pair.alt.ns, HUB)]
        steps = republish(pair.alt, keys, f"bench-floor-{run}", edge_reads=True, cpu=pair.cpu)
    return steps, pair.cpu() - start - steps.pop("edge_reads_cpu", 0.0)


def _stale_seconds(pair: Pair) -> dict[str, float]:
    today = _timed(partial(pair.today.store.read, STALE_SERVED, ns=pair.today.ns))[0]
    alt = _timed(partial(pair.alt.store.read, MODEL_STALE_SERVED, ns=pair.alt.ns))[0]
    return {"today": today, "identity": alt}


def one_run(pair: Pair, n: int, run: int) -> Run:
    """Reach, serving, both floors and the audit comparison, alternating who goes first."""
    models = MODELS if run % 2 else tuple(reversed(MODELS))
    reach, reach_cpu, reached, uid_s, text_s, served = {}, {}, {}, {}, {}, {}
    for model in models:
        reach[model], reach_cpu[model], reached[model] = _reach(pair, model)
    for model in models:
        uid_s[model], text_s[model], served[model] = _serving(pair.of(model), pair)
    floors, floor_cpu = {}, {}
    for model in models:
        floors[model], floor_cpu[model] = _floor(pair, model, run)
    differences = audit_differences(
        pair.today, pair.alt, [f"bench-floor-{run}"], pair.lineage, roots=[HUB]
    )
    if reached["today"] != reached["identity"]:
        differences.append(f"reach before the floor: {len(reached['today'] ^ reached['identity'])}")
    if served["today"] != served["identity"]:
        differences.append("uid reads served different versions or contents")
    return Run(
        n,
        run,
        len(reached["today"]),
        reach,
        {m: _ms_quantile(uid_s[m], 50) for m in MODELS},
        {m: _ms_quantile(uid_s[m], 99) for m in MODELS},
        {m: _ms_quantile(text_s[m], 50) for m in MODELS},
        _stale_seconds(pair),
        floors["today"],
        floors["identity"],
        reach_cpu,
        floor_cpu,
        differences,
    )


def _pair(base: MemoryStore, n: int, options: Options) -> Pair:
    today = _fresh(f"model-today-{n}", base)
    alt = _fresh(f"model-identity-{n}", base)
    items = layered_memory(n)
    took_today, _ = _timed(partial(today.import_items, items))
    took_alt, _ = _timed(partial(import_identity_model, alt, items))
    print(
        f"{n:>9} import: today {took_today:.1f} s (engine importer); identity {took_alt:.1f} s "
        "(bench importer, one more node per uid)"
    )
    rng = random.Random(n)
    uids = [a.uid for a in items]
    cascade = sorted(reach_uids(today, REACH_CASCADE, HUB))
    lineage = rng.sample(cascade, min(len(cascade), options.lineage_sample // 2 or 1))
    lineage += rng.sample(uids, min(len(uids), options.lineage_sample - len(lineage)))
    texts = [f"{rng.choice(('fact rec', 'cache cache', 'summary sum'))}-{rng.randrange(n // 5)}"]
    texts += [f"skill {rng.randrange(n // 10)}" for _ in range(options.text_reads - 1)]
    uid_reads = rng.sample(uids, options.uid_reads)
    return Pair(today, alt, uid_reads, texts, sorted(set(lineage)), cpu_clock(base))


def print_plans(memory: MemoryStore) -> bool:
    """Both reach plans; True when both use the pruning BFS expand."""
    pruned = True
    for name, query in (("today", REACH_CASCADE), ("identity", MODEL_REACH)):
        ops = _plan_operators(memory.store.explain(query, {"keys": ["x/none"]}))
        pruned &= any(op.startswith(PRUNING) for op in ops)
        print(f"reach plan, {name + ':':<9} " + " <- ".join(ops))
    return pruned


HEADER = (
    f"{'artifacts':>9} {'run':>3} {'cascade':>7} | {'reach s':>13} {'cpu s':>11} | "
    f"{'uid p50 ms':>11} {'p99 ms':>11} {'text p50 ms':>13} | {'stale s':>11} | "
    f"{'floor s':>13} {'ratio':>5} {'cpu s':>13} {'ratio':>5} {'+edge':>5} | {'diffs':>5}"
)


def _pairs(values: Mapping[str, float], fmt: str) -> str:
    return "/".join(format(values[m], fmt) for m in MODELS)


def print_run(row: Run, label: str) -> None:
    floor, cpu = row.floor, row.floor_cpu
    print(
        f"{row.n:>9} {label:>3} {row.cascade:>7} | {_pairs(row.reach, '6.3f')} "
        f"{_pairs(row.reach_cpu, '5.2f')} | {_pairs(row.uid_p50, '5.1f')} "
        f"{_pairs(row.uid_p99, '5.1f')} {_pairs(row.text_p50, '6.0f')} | "
        f"{_pairs(row.stale, '5.2f')} | {_pairs(floor, '6.2f')} "
        f"{floor['today'] / floor['identity']:5.2f} {_pairs(cpu, '6.2f')} "
        f"{cpu['today'] / cpu['identity']:5.2f} "
        f"{row.model_floor.get('edge_reads', float('nan')):5.2f} | {len(row.differences):>5}"
    )


def print_steps(row: Run, label: str) -> None:
    """Each floor's steps, today's first (the identity model's ``lineage`` is its only
    influence-edge writing; ``edge reads`` is the variant, not in its floor)."""
    today = " ".join(f"{s} {row.today_floor[s]:.2f}" for s in FLOOR_STEPS)
    model = " ".join(f"{s} {row.model_floor[s]:.2f}" for s in MODEL_STEPS)
    first = "today first" if row.run % 2 else "identity first"
    order = f"; {first}" if row.run else ""
    print(f"{'':>9} {label}steps today: {today}")
    print(
        f"{'':>9} {label}steps identity: {model} (edge reads "
        f"{row.model_floor.get('edge_reads', float('nan')):.2f}){order}"
    )


def _median_run(runs: list[Run]) -> Run:
    def med(get: Callable[[Run], Mapping[str, float]], keys: Iterable[str]) -> dict[str, float]:
        return {k: _median([get(r)[k] for r in runs]) for k in keys}

    return Run(
        runs[0].n,
        0,
        int(_median([r.cascade for r in runs])),
        med(lambda r: r.reach, MODELS),
        med(lambda r: r.uid_p50, MODELS),
        med(lambda r: r.uid_p99, MODELS),
        med(lambda r: r.text_p50, MODELS),
        med(lambda r: r.stale, MODELS),
        med(lambda r: r.today_floor, FLOOR_STEPS),
        med(lambda r: r.model_floor, (*MODEL_STEPS, "edge_reads")),
        med(lambda r: r.reach_cpu, MODELS),
        med(lambda r: r.floor_cpu, MODELS),
        [d for r in runs for d in r.differences],
    )


def bench_size(base: MemoryStore, n: int, options: Options) -> list[str]:
    """All repeats at one size; returns the audit differences found (none expected)."""
    pair = _pair(base, n, options)
    runs = []
    for run in range(1, options.repeats + 1):
        runs.append(one_run(pair, n, run))
        print_run(runs[-1], str(run))
        print_steps(runs[-1], "")
    median = _median_run(runs)
    print_run(median, "med")
    print_steps(median, "medians ")
    ratios = [r.floor["today"] / r.floor["identity"] for r in runs]
    totals = {m: _median([r.floor[m] for r in runs]) for m in MODELS}
    print(
        f"{'':>9} floor totals (medians) today {totals['today']:.2f} s, identity "
        f"{totals['identity']:.2f} s: ratio {totals['today'] / totals['identity']:.2f}; "
        f"median of the per-run ratios {_median(ratios):.2f}"
    )
    cpu_ratios = [r.floor_cpu["today"] / r.floor_cpu["identity"] for r in runs]
    reach_ratios = [r.reach_cpu["identity"] / r.reach_cpu["today"] for r in runs]
    print(
        f"{'':>9} CPU seconds (server + client), medians of the per-run ratios: floor "
        f"today/identity {_median(cpu_ratios):.2f}; reach identity/today "
        f"{_median(reach_ratios):.2f}"
    )
    print(f"{'':>9} server {_server_memory(pair.today)}")
    for line in median.differences[:20]:
        print(f"{'':>9} DIFFERENCE {line}")
    pair.today.clear()
    pair.alt.clear()
    return median.differences


def main(argv: list[str] | None = None) -> int:
    parser = bench_args.parser("python -m bench.model_floor", __doc__)
    parser.add_argument("--sizes", default="1e5,2e5", help="artifact counts (default: %(default)s)")
    parser.add_argument("--repeats", type=int, default=3, help="runs per size (default: 3)")
    parser.add_argument("--uid-reads", type=int, default=200, help="uid reads per model and run")
    parser.add_argument(
        "--text-reads", type=int, default=5, help="substring reads per model and run"
    )
    parser.add_argument(
        "--lineage-sample", type=int, default=300, help="uids whose lineage is compared per run"
    )
    args = parser.parse_args(argv)
    options = Options(args.repeats, args.uid_reads, args.text_reads, args.lineage_sample)
    sizes = [int(float(s)) for s in args.sizes.split(",") if s.strip()]
    print(f"bench model_floor: {os.cpu_count()} cpus, repeats {options.repeats}")
    differences: list[str] = []
    with open_store(ns="model-floor") as base:
        apply_identity_schema(base)
        print(f"server {base.store.verify()} at {base.store.uri}")
        if not print_plans(base):
            print("a reach plan is not the pruning BFS")
            differences.append("reach plan")
        print(
            "each pair is today/identity; reach, stale-served and floor in wall seconds, "
            "cpu s = CPU seconds of the server and this process; ratio = today / identity; "
            "+edge = what recording the version read on each influence edge would add to "
            "the identity floor (wall s); diffs = audit differences"
        )
        print(HEADER)
        for n in sizes:
            differences += bench_size(base, n, options)
    print(f"\npython peak RSS {_py_peak_mib():.0f} MiB")
    print(f"audit answers equal in every run: {'yes' if not differences else 'NO'}")
    return 1 if differences else 0


if __name__ == "__main__":
    sys.exit(main())
