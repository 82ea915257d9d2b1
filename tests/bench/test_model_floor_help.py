"""`python -m bench.model_floor -h` documents the identity-model benchmark and its options."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_model_floor_help_lists_its_options() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "bench.model_floor", "-h"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    assert "usage: python -m bench.model_floor" in result.stdout
    for option in ("--sizes", "--repeats", "--uid-reads", "--text-reads", "--lineage-sample"):
        assert option in result.stdout
    assert "artifact counts (default: 1e5,2e5)" in result.stdout
