"""Default values from use and costs from work, the w_i and c_i of SPEC §4 (docs/values.md).

The selection maximises `sum w - lambda * sum c`; nobody in a deployment sets w and c by
hand, so the engine derives them, and says where each came from:

- **w (value)**: an explicit `value` on the artifact wins (`explicit`). Else, if serving
  reads recorded use of the uid, w = prior(kind) x u, where u is its decayed use count
  now: each read `a` seconds ago weighs `2^(-a / MEMOREPAIR_VALUE_HALF_LIFE_H)` (`use`).
  A uid with no recorded read counts as evidence only once it was open to recorded use for
  `MEMOREPAIR_VALUE_WARMUP_H` (recording on in its namespace and the version that old):
  then w = 0 (`use`, never served). Before that, or with recording never on, w is the
  per-kind prior from `MEMOREPAIR_VALUES` (`prior`).
- **c (cost)**: an explicit `repair_cost` wins (`explicit`). Else the measured seconds
  of build + validation of the artifact's current version, when a repair built it
  (`work_s` on the successor), times `MEMOREPAIR_COST_PER_SECOND` (`work`); else the
  per-kind prior from `MEMOREPAIR_COSTS` (`prior`).

The functions here are pure (time passed in) so unit tests pin them; `read_uses` is the
one read they need.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from memorepair import queries
from memorepair.model import MAX_COST, artifact_key
from memorepair.serving.usage import decay
from memorepair.store import Store

READ_USAGE = queries.named("values/read_usage")

EXPLICIT, USE, WORK, PRIOR = "explicit", "use", "work", "prior"


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


def cost_from_work(prior: float, work_s: float | None, per_second: float) -> tuple[float, str]:
    """c and its source for an artifact without an explicit repair_cost."""
    if work_s is None or work_s < 0:
        return prior, PRIOR
    return min(MAX_COST, work_s * per_second), WORK


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
