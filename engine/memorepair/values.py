"""Default values from use and costs from work, the w_i and c_i of SPEC §4, in one unit
each (docs/values.md).

The selection maximises `sum w - lambda * sum c` with w in reads and c in seconds, so
lambda is in reads per second of repair (1 / lambda: the seconds of repair one read is
worth). Nobody in a deployment sets w and c by hand, so the engine derives them, and says
where each came from:

- **w (value)**: an explicit `value` on the artifact wins (`explicit`). Else, if serving
  reads recorded use of the uid, w = prior(kind) x u, where u is its decayed use count
  now: each read `a` seconds ago weighs `2^(-a / MEMOREPAIR_VALUE_HALF_LIFE_H)` (`use`).
  A uid with no recorded read counts as evidence only once it was open to recorded use for
  `MEMOREPAIR_VALUE_WARMUP_H` (recording on in its namespace and the version that old):
  then w = 0 (`use`, never served). Before that, or with recording never on, w is the
  per-kind prior from `MEMOREPAIR_VALUES` (`prior`).
- **c (cost), in seconds**: an explicit `repair_cost` wins (`explicit`). Else the
  measured seconds of build + validation of the last repair that built a version of the
  artifact (`work_s` on that successor: `work`); else the median of the namespace's
  recent measurements for the candidate's operator and kind (`median`), which every
  repair adds to (`record_work`); else the per-kind prior from `MEMOREPAIR_COSTS`, stated
  in seconds (`prior`).

The functions here are pure (time passed in) so unit tests pin them; `read_uses` and
`read_work` are the reads they need, `record_work` the one write.
"""

from __future__ import annotations

import logging
import statistics
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from memorepair import queries
from memorepair.errors import DatabaseError
from memorepair.model import MAX_COST, artifact_key
from memorepair.serving.usage import decay
from memorepair.store import Store

READ_USAGE = queries.named("values/read_usage")
READ_WORK = queries.named("values/read_work")
RECORD_WORK = queries.named("values/record_work")

EXPLICIT, USE, WORK, MEDIAN, PRIOR = "explicit", "use", "work", "median", "prior"

#: Measurements kept per namespace, operator and kind for the running median: enough to
#: be steady on a noisy machine, few enough to follow an operator that got faster.
WORK_WINDOW = 64

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Use:
    """A uid's recorded use: reads, decayed frequency `freq` as of `freq_at` (epoch s)."""

    count: int
    freq: float
    freq_at: float


@dataclass(frozen=True)
class Uses:
    """The recorded use of some uids, and when recording began in their namespace."""

    since: float | None  # epoch seconds; None: recording never wrote here
    by_uid: Mapping[str, Use]
    now: float


def decayed_uses(use: Use, now: float, half_life_s: float) -> float:
    """u: the uid's reads, each weighted by 2^(-age / half-life), at time `now`."""
    return use.freq * decay(now - use.freq_at, half_life_s)


def value_from_use(
    prior: float,
    use: Use | None,
    *,
    now: float,
    since: float | None,
    created: float | None,
    half_life_s: float,
    warmup_s: float,
) -> tuple[float, str]:
    """w and its source for an artifact without an explicit value (see the module)."""
    if use is not None:
        return prior * decayed_uses(use, now, half_life_s), USE
    if since is not None:
        opened = max(since, created) if created is not None else since
        if now - opened >= warmup_s:
            return 0.0, USE
    return prior, PRIOR


def cost_from_work(
    prior_s: float, work_s: float | None, median_s: float | None
) -> tuple[float, str]:
    """c in seconds and its source for an artifact without an explicit repair_cost: its
    last successor's measured work, else the running median of its operator and kind,
    else the kind's prior."""
    if work_s is not None and work_s >= 0:
        return min(MAX_COST, work_s), WORK
    if median_s is not None and median_s >= 0:
        return min(MAX_COST, median_s), MEDIAN
    return prior_s, PRIOR


@dataclass(frozen=True)
class WorkStats:
    """A namespace's recent measured repair seconds, per (operator, kind key)."""

    samples: Mapping[tuple[str, str], Sequence[float]] = field(default_factory=dict)

    def median(self, operator: str | None, kind: str) -> float | None:
        """The median of the recent measurements of ``operator`` on ``kind`` (None: none)."""
        found = self.samples.get((operator, kind)) if operator else None
        return statistics.median(found) if found else None


def read_work(store: Store, ns: str) -> WorkStats:
    """What the namespace's repairs measured so far (one read)."""
    (row,) = store.read(READ_WORK, ns=ns)
    return WorkStats(
        {(s["operator"], s["kind"]): [float(x) for x in s["samples"]] for s in row["stats"]}
    )


def work_rows(
    ns: str, measured: Iterable[tuple[str | None, str, float | None]]
) -> list[dict[str, Any]]:
    """`record_work` rows: (operator, kind key, seconds) grouped per operator and kind."""
    grouped: dict[tuple[str, str], list[float]] = {}
    for operator, kind, seconds in measured:
        if operator and seconds is not None and seconds >= 0:
            grouped.setdefault((operator, kind), []).append(float(seconds))
    return [
        {"key": f"{ns}/{op}/{kind}", "operator": op, "kind": kind, "samples": found}
        for (op, kind), found in sorted(grouped.items())
    ]


def record_work(
    store: Store, ns: str, measured: Iterable[tuple[str | None, str, float | None]]
) -> None:
    """Add one event's measured seconds to the namespace's running medians.

    A failed write is logged and dropped: the measurements refine later cost estimates,
    they are not worth failing a repair for (the successors carry their own `work_s`).
    """
    rows = work_rows(ns, measured)
    if not rows:
        return
    try:
        store.write(RECORD_WORK, ns=ns, rows=rows, window=WORK_WINDOW)
    except DatabaseError as exc:
        log.warning("could not record the repair's measured work in %s: %s", ns, exc)


def read_uses(store: Store, ns: str, uids: Sequence[str], now: float | None = None) -> Uses:
    """The recorded use of `uids` (one read per batch) at `now` (default: the clock)."""
    since: float | None = None
    found: dict[str, Use] = {}
    keys = [artifact_key(ns, u) for u in uids]
    for rows in store.read_batches(READ_USAGE, "keys", keys, ns=ns):
        (row,) = rows
        since = row["since"]
        for u in row["uses"]:
            found[u["uid"]] = Use(int(u["count"]), float(u["freq"]), float(u["freq_at"]))
    if not keys:
        (row,) = store.read(READ_USAGE, ns=ns, keys=[])
        since = row["since"]
    return Uses(since, found, time.time() if now is None else now)
