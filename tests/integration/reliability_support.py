"""Shared helpers for the reliability tests: CLI subprocesses, fault hooks, invariants.

Also runnable as a script: `python reliability_support.py reader NS OUT UIDS_FILE STOP_FILE`
is the serving-read loop the concurrency test runs in separate processes.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memorepair import events, queries
from memorepair.api import MemoryStore
from memorepair.events import PAUSE_ENV
from memorepair.model import ArtifactIn, Kind, Recipe
from memorepair.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "engine" / "memorepair" / "sample"
MEMORYREPAIR_BIN = Path(sys.executable).parent / "memorepair"
#: Every phase a repair records after creating its event (each a kill point).
PHASES = tuple(p for p in events.PHASES if p != "created")
EMBEDDING_STATE = queries.named(
    "embedding_state", root=Path(__file__).parent / "cypher", label="tests/integration/cypher"
)


def cli_env(ns: str, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != PAUSE_ENV}
    env["MEMOREPAIR_NAMESPACE"] = ns
    env.update(extra)
    return env


def run_cli(
    ns: str, *args: str, timeout: float = 120.0, **env: str
) -> subprocess.CompletedProcess[str]:
    """Run `memorepair ARGS` in namespace `ns` to completion (the real entry point)."""
    return subprocess.run(
        [str(MEMORYREPAIR_BIN), *args],
        env=cli_env(ns, **env),
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def sample_event(name: str, event_id: str, tmp: Path) -> Path:
    """A copy of a sample event file under a fresh id (markers are keyed by event id)."""
    data = json.loads((SAMPLE / f"event-{name}.json").read_text(encoding="utf-8"))
    data["id"] = event_id
    path = tmp / f"{event_id}.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def write_event(tmp: Path, data: Mapping[str, Any]) -> Path:
    path = tmp / f"{data['id']}.json"
    path.write_text(json.dumps(dict(data)), encoding="utf-8")
    return path


@dataclass
class Paused:
    """A `memorepair repair` subprocess held after a phase by the fault hook."""

    process: subprocess.Popen[str]
    marker: Path

    def kill(self) -> None:
        if self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=30)
        self.marker.unlink(missing_ok=True)


def start_paused(
    settings: Settings,
    ns: str,
    event_file: Path,
    event_id: str,
    phase: str,
    *extra_args: str,
    timeout: float = 120.0,
    env: Mapping[str, str] | None = None,
) -> Paused:
    """Start `memorepair repair EVENT` with the pause hook and wait for its marker."""
    marker = settings.state_dir.resolve() / f"fault-{event_id}-{phase}"
    marker.unlink(missing_ok=True)
    process = subprocess.Popen(
        [str(MEMORYREPAIR_BIN), "repair", str(event_file), *extra_args],
        env=cli_env(ns, **{PAUSE_ENV: phase, **(env or {})}),
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + timeout
    while not marker.exists():
        if process.poll() is not None:
            out, err = process.communicate()
            raise AssertionError(
                f"repair exited ({process.returncode}) before pausing after {phase}: {out}{err}"
            )
        if time.monotonic() > deadline:
            os.kill(process.pid, signal.SIGKILL)
            raise AssertionError(f"no marker {marker} within {timeout}s")
        time.sleep(0.05)
    assert marker.read_text(encoding="utf-8").strip() == str(process.pid)
    return Paused(process, marker)


# ---- invariants ------------------------------------------------------------------------
def served(memory: MemoryStore) -> dict[str, tuple[int, str]]:
    """uid -> (version, content) of everything the namespace serves."""
    return {a.uid: (a.version, a.content) for a in memory.retrieve(limit=10_000)}


def versions(memory: MemoryStore, uid: str) -> list[tuple[int, str]]:
    return [(int(r["version"]), str(r["visibility"])) for r in memory.lineage(uid)]


def vectors(memory: MemoryStore) -> dict[tuple[str, int], tuple[str, list[float] | None]]:
    """(uid, version) -> (visibility, vector or None) of every version in the namespace."""
    rows = memory.store.read(EMBEDDING_STATE, ns=memory.ns)
    return {
        (r["uid"], int(r["version"])): (
            str(r["visibility"]),
            None if r["embedding"] is None else [float(x) for x in r["embedding"]],
        )
        for r in rows
    }


def same_vectors(
    got: Mapping[tuple[str, int], tuple[str, list[float] | None]],
    want: Mapping[tuple[str, int], tuple[str, list[float] | None]],
) -> list[tuple[str, int]]:
    """The versions whose visibility or vector differ (vectors equal within 1e-6)."""
    return [
        key
        for key in sorted(set(got) | set(want))
        if not _same(got.get(key, ("-", None)), want.get(key, ("-", None)))
    ]


def _same(a: tuple[str, list[float] | None], b: tuple[str, list[float] | None]) -> bool:
    if a[0] != b[0] or a[1] is None or b[1] is None:
        return a[0] == b[0] and a[1] is None and b[1] is None
    return len(a[1]) == len(b[1]) and all(
        abs(x - y) <= 1e-6 for x, y in zip(a[1], b[1], strict=True)
    )


def check_invariants(
    memory: MemoryStore, cascade: Iterable[str], *, allowed: Mapping[str, int] | None = None
) -> None:
    """The barrier's promises at any instant.

    No version of C(F) that the barrier withdrew is served (`allowed` maps a uid to the
    one version that may be served: a root's replacement or a published successor); no
    live artifact has non-live support; no uid has two live versions; no staged version
    is served.
    """
    allowed = dict(allowed or {})
    for uid in cascade:
        got = memory.retrieve(uid=uid)
        assert len(got) <= 1, f"{uid}: {len(got)} versions served"
        if got:
            assert allowed.get(uid) == got[0].version, (
                f"{uid}@{got[0].version} of the cascade is served (allowed {allowed.get(uid)})"
            )
        history = versions(memory, uid)
        live = [v for v, vis in history if vis == "Live"]
        assert len(live) <= 1, f"{uid} has live versions {live}"
        staged = {v for v, vis in history if vis == "Staged"}
        assert not (staged & {a.version for a in got}), f"{uid}: a staged version is served"
        assert len({v for v, _ in history}) == len(history), f"{uid}: duplicate versions {history}"
    assert memory.stale_served() == [], memory.stale_served()


# ---- synthetic memories ------------------------------------------------------------------
def fan_memory(width: int, keep: int = 20, prefix: str = "") -> list[ArtifactIn]:
    """A root record, `keep` retained records and `width` replayable caches (text.join of
    the root and one retained record). A `correct` of the root recomputes every cache."""
    items = [ArtifactIn(uid=f"{prefix}root", kind=Kind.RECORD, content=f"{prefix}root v1")]
    items += [
        ArtifactIn(uid=f"{prefix}keep-{k}", kind=Kind.RECORD, content=f"retained {k}")
        for k in range(keep)
    ]
    recipe = Recipe(executor="text.join", args={"sep": " | "})
    items += [
        ArtifactIn(
            uid=f"{prefix}c-{i}",
            kind=Kind.CACHE,
            content=f"{prefix}root v1 | retained {i % keep}",
            recipe=recipe,
            inputs=[f"{prefix}root", f"{prefix}keep-{i % keep}"],
        )
        for i in range(width)
    ]
    return items


def correct_event(event_id: str, root: str, content: str) -> dict[str, Any]:
    return {
        "id": event_id,
        "type": "correct",
        "roots": [root],
        "replacements": [{"replaces": root, "content": content}],
    }


# ---- the reader process --------------------------------------------------------------------
def _reader(ns: str, out: Path, uids_file: Path, stop_file: Path) -> None:
    from memorepair.api import open_store

    uids: Sequence[str] = json.loads(uids_file.read_text(encoding="utf-8"))
    rows = []
    with open_store(ns=ns) as memory:
        memory.retrieve(uid=uids[0])  # warm the connection pool
        out.with_suffix(".ready").write_text("ready", encoding="utf-8")
        k = 0
        while not stop_file.exists():
            uid = uids[k % len(uids)]
            k += 1
            start = time.monotonic()
            got = memory.retrieve(uid=uid)
            end = time.monotonic()
            rows.append([start, end, uid, got[0].version if got else None])
    out.write_text(json.dumps(rows), encoding="utf-8")


if __name__ == "__main__":
    if sys.argv[1] == "reader":
        _reader(sys.argv[2], Path(sys.argv[3]), Path(sys.argv[4]), Path(sys.argv[5]))
