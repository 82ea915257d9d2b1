"""The paper's figures (SPEC §7) as pure functions over what the store served.

Exposure: a post-event retrieval is *exposed* when it returns an artifact whose support
includes invalidated information: a version that was in C(F) when the event fired (still
served because nothing withdrew it), or an artifact one of whose influence inputs in C(F)
is exposed or no longer served (it was derived from support that is gone). Inputs outside
C(F) are retained support, clean by definition, so the check never leaves the cascade.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Served:
    """One artifact version as a retrieval returned it."""

    uid: str
    version: int
    inputs: tuple[str, ...] = ()


Lookup = Callable[[str], "Served | None"]


class ExposureCheck:
    """Decides exposure against the cascade as it stood when the event fired.

    ``fired`` maps every uid of C(F) to its version at that moment; ``live`` returns the
    version a reader would be served now (``None`` if withdrawn or removed).
    """

    def __init__(self, fired: Mapping[str, int], live: Lookup):
        self.fired = dict(fired)
        self.live = live
        self._memo: dict[tuple[str, int], bool] = {}

    def exposed(self, served: Served) -> bool:
        key = (served.uid, served.version)
        if key not in self._memo:
            self._memo[key] = True  # a cycle through served versions cannot clear itself
            self._memo[key] = self._check(served)
        return self._memo[key]

    def _check(self, served: Served) -> bool:
        fired = self.fired.get(served.uid)
        if fired is not None and served.version <= fired:
            return True
        for u in served.inputs:
            if u in self.fired:
                support = self.live(u)
                if support is None or self.exposed(support):
                    return True
        return False


def exposure(retrievals: Sequence[Sequence[Served]], check: ExposureCheck) -> float:
    """Share of retrievals that returned at least one exposed artifact."""
    if not retrievals:
        return 0.0
    return sum(any(check.exposed(s) for s in r) for r in retrievals) / len(retrievals)


def availability(retrievals: Sequence[Sequence[Served]]) -> float:
    """Share of retrievals that returned anything at all (withdrawn memory is a miss)."""
    if not retrievals:
        return 0.0
    return sum(bool(r) for r in retrievals) / len(retrievals)


def ratio(part: float, whole: float) -> float | None:
    """``part / whole`` (recovered or normalised cost relative to Repair-all); ``None`` if 0/0."""
    if whole == 0:
        return None if part == 0 else float("inf")
    return part / whole


@dataclass(frozen=True)
class Recovery:
    """One event's repair against what it could have published, and the look-ups after.

    ``runnable``: the successors the event could have published (every candidate
    Repair-all would select in the same state: executable, nothing it needs unrepairable);
    ``published``: those the system published; ``lookups``: the post-event workload, one
    uid per look-up.
    """

    runnable: frozenset[str]
    published: frozenset[str]
    lookups: tuple[str, ...]

    @property
    def recovered(self) -> float | None:
        """Published share of what could be published (None: the event had nothing)."""
        return ratio(len(self.published & self.runnable), len(self.runnable))

    @property
    def uids(self) -> tuple[int, int]:
        """(hit, eligible): distinct looked-up uids that were published / could have been."""
        eligible = set(self.lookups) & self.runnable
        return len(eligible & self.published), len(eligible)

    @property
    def looks(self) -> tuple[int, int]:
        """(hit, eligible), one per look-up: a uid read five times counts five times."""
        eligible = [u for u in self.lookups if u in self.runnable]
        return sum(u in self.published for u in eligible), len(eligible)


def pooled(pairs: Sequence[tuple[int, int]]) -> float | None:
    """Σ hit / Σ eligible over events (None: nothing eligible anywhere)."""
    return ratio(sum(h for h, _ in pairs), sum(e for _, e in pairs))
