"""Fault injection for the crash tests: hold a process at a named point until it is killed.

`MEMOREPAIR_FAULT_PAUSE_AFTER=<point>` makes the process that reaches `point` write a
marker file holding its pid (whole or absent) and sleep there; the test SIGKILLs it and
checks what a crash at exactly that point leaves. Never set it in production.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

PAUSE_ENV = "MEMOREPAIR_FAULT_PAUSE_AFTER"


def pause_if_asked(state_dir: Path, tag: str, point: str) -> None:
    """Wait at `point` to be killed (marker `fault-<tag>-<point>`), if asked to."""
    if os.environ.get(PAUSE_ENV) != point:
        return
    marker = state_dir / f"fault-{tag}-{point}"
    marker.parent.mkdir(parents=True, exist_ok=True)
    partial = marker.with_suffix(".partial")  # whole or absent: the test reads the pid
    partial.write_text(str(os.getpid()), encoding="utf-8")
    partial.replace(marker)
    while True:  # the test kills us here with SIGKILL
        time.sleep(1)
