"""`make test` runs the unit tier before the integration tier, as the README says."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_unit_tests_are_collected_before_integration_tests() -> None:
    collected = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert collected.returncode == 0, collected.stdout[-2000:] + collected.stderr[-2000:]
    ids = [line for line in collected.stdout.splitlines() if "::" in line]
    tiers = [line.startswith("tests/integration/") for line in ids]
    assert any(tiers) and not all(tiers)
    first_integration = tiers.index(True)
    late = [i for i, t in zip(ids, tiers, strict=True) if not t][-1:]
    assert all(tiers[first_integration:]), f"unit test {late} runs after {ids[first_integration]}"
