"""`--help` reaches the benchmarks' own option parsers (they are argparse programs)."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from memorepair.cli import cli


@pytest.mark.parametrize("flag", ["-h", "--help"])
def test_bench_perf_help_lists_its_options_and_sections(flag: str) -> None:
    result = CliRunner().invoke(cli, ["bench", "perf", flag])
    assert result.exit_code == 0, result.output
    assert "usage: memorepair bench perf" in result.output
    for option in ("--sizes", "--only", "--selection-sizes", "--depths", "--write-n"):
        assert option in result.output
    assert "phases: artifact counts (default: 1e3,1e4,1e5)" in result.output


def test_bench_group_help_still_lists_the_benchmarks() -> None:
    result = CliRunner().invoke(cli, ["bench", "--help"])
    assert result.exit_code == 0
    assert "perf" in result.output and "eval" in result.output
