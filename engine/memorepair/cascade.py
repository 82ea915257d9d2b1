"""SPEC §2: the cascade C(F) as data, and the audit record of what the repair decided on it.

`reach` reads the cascade a plan would withdraw (nothing written); `read_withdrawn`
reads the cascade an event holds after its barrier, with the facts a crashed run may
already have recorded on it. Both return what the mode map needs and no contents (those
are read later, only for the candidates that are selected). `record_facts` writes each
candidate's mode, value, cost and selection on its WITHDREW edge before anything is built,
so an auditor can ask why an artifact was or was not repaired, and a resumed run keeps
the selection it recorded.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from memorepair import queries
from memorepair.candidates import CandidateFamily, CascadeNode
from memorepair.errors import InputError, some
from memorepair.model import Arch, Kind, Recipe, RepairEventSpec, artifact_key
from memorepair.store import Store, rest

PLAN_CASCADE = queries.named("cascade/plan_cascade")
CASCADE_NODES = queries.named("cascade/cascade_nodes")
SERVED_INPUTS = queries.named("cascade/served_inputs")
RECORD_CANDIDATES = queries.named("cascade/record_candidates")


@dataclass(frozen=True)
class Cascade:
    """C(F) as the mode map needs it, plus what a resumed run reuses."""

    nodes: tuple[CascadeNode, ...]
    #: Every input outside C(F), by uid: whether it is served now (retained support).
    served_outside: Mapping[str, bool]
    #: Each node's WITHDREW edge (element id) if already written, by vid.
    withdrew: Mapping[str, str | None]
    #: The selection a crashed run of the event recorded (uids), if it recorded one.
    recorded_selection: frozenset[str]

    @property
    def uids(self) -> list[str]:
        return sorted(n.uid for n in self.nodes)


def reach(store: Store, spec: RepairEventSpec) -> Cascade:
    """The cascade the barrier would withdraw now, read-only (for `plan`)."""
    keys = [artifact_key(spec.ns, u) for u in spec.roots]
    rows = store.read(PLAN_CASCADE, keys=keys)[0]["rows"]
    found = {r["uid"] for r in rows if r["root"]}
    missing = [u for u in spec.roots if u not in found]
    if missing:
        raise InputError(f"event {spec.id!r}: {some(missing, 'unknown or deleted root')}")
    return _cascade(store, spec, rows)


def read_withdrawn(store: Store, spec: RepairEventSpec, event_key: str) -> Cascade:
    """The cascade the event's barrier withdrew (late arrivals are audited, not repaired)."""
    keys = [artifact_key(spec.ns, u) for u in spec.roots]
    rows = store.read(CASCADE_NODES, event_key=event_key, keys=keys)[0]["rows"]
    return _cascade(store, spec, rows)


def record_facts(
    store: Store,
    event_key: str,
    cascade: Cascade,
    family: CandidateFamily,
    selected: Collection[str],
    *,
    checkpoint: Callable[[str], None],
    pace: float = 1.0,
) -> None:
    """Write every candidate's facts on its WITHDREW edge, in batches, paced (`pace`, the
    share of time the repair's writes may take: MEMOREPAIR_REPAIR_PACE).

    A crash between batches leaves some edges written: the re-run reads them back
    (`withdrew`) and MERGEs the rest, so each node keeps exactly one.
    """
    in_selection = set(selected)
    rows = [
        {
            "withdrew": cascade.withdrew[c.vid],
            "vid": c.vid,
            "mode": c.mode.value,
            "executable": c.executable,
            "reason": c.reason,
            "value": c.value,
            "cost": c.cost,
            "value_source": c.value_source,
            "cost_source": c.cost_source,
            "requires": list(c.requires) or None,  # none stored: an empty list costs a write
            "selected": c.uid in in_selection,
        }
        for c in family.candidates
    ]
    for batch in store.batched(rows):
        started = time.monotonic()
        store.write(RECORD_CANDIDATES, event_key=event_key, rows=batch)
        checkpoint("recording")
        rest(time.monotonic() - started, pace)


def _cascade(store: Store, spec: RepairEventSpec, rows: Sequence[Mapping[str, Any]]) -> Cascade:
    nodes = tuple(_node(r) for r in rows)
    inside = {n.uid for n in nodes}
    outside = sorted({u for n in nodes for u in n.inputs if u not in inside})
    live: set[str] = set()
    keys = [artifact_key(spec.ns, u) for u in outside]
    for batch in store.read_batches(SERVED_INPUTS, "keys", keys):
        live.update(batch[0]["live"])
    return Cascade(
        nodes=nodes,
        served_outside={u: u in live for u in outside},
        withdrew={r["vid"]: r.get("withdrew") for r in rows},
        recorded_selection=frozenset(r["uid"] for r in rows if r.get("selected")),
    )


def _node(row: Mapping[str, Any]) -> CascadeNode:
    return CascadeNode(
        vid=row["vid"],
        uid=row["uid"],
        version=row["version"],
        kind=Kind(row["kind"]),
        arch=Arch(row["arch"]) if row["arch"] else None,
        value=row["value"],
        repair_cost=row["repair_cost"],
        recipe=Recipe.model_validate(json.loads(row["recipe"])) if row["recipe"] else None,
        inputs=tuple(row["inputs"] or ()),
        root=bool(row["root"]),
        created=row.get("created"),
        work_s=row.get("work_s"),
    )
