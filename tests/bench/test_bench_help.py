"""The benchmarks are programs beside the engine (`python -m bench.perf`), with `-h`."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("flag", ["-h", "--help"])
def test_bench_perf_help_lists_its_options_and_sections(flag: str) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "bench.perf", flag], cwd=ROOT, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    assert "usage: python -m bench.perf" in result.stdout
    for option in ("--sizes", "--only", "--selection-sizes", "--depths", "--write-n"):
        assert option in result.stdout
    assert "phases: artifact counts (default: 1e3,1e4,1e5)" in result.stdout


def test_the_engine_never_imports_the_benchmarks() -> None:
    engine = ROOT / "engine" / "memorepair"
    offenders = [
        str(path.relative_to(ROOT))
        for path in engine.rglob("*.py")
        if "import bench" in (text := path.read_text(encoding="utf-8")) or "from bench" in text
    ]
    assert offenders == []
    assert not (engine / "bench").exists()


def test_bench_erasure_scan_has_help() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "bench.erasure_scan", "-h"], cwd=ROOT, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    assert "usage: python -m bench.erasure_scan" in result.stdout and "--sizes" in result.stdout


def test_bench_audit_share_has_help_that_says_the_lean_engine_is_not_correct() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "bench.audit_share", "-h"], cwd=ROOT, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    assert "usage: python -m bench.audit_share" in result.stdout
    assert "--sizes" in result.stdout and "--repeats" in result.stdout
    assert "The lean engine is not a correct one" in result.stdout
