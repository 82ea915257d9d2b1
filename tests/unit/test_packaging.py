"""The wheel carries its queries, the launcher's pom and the sample, and works outside the repo."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_wheel_works_outside_the_checkout(tmp_path: Path) -> None:
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "-q",
            "--no-deps",
            "-w",
            str(tmp_path / "dist"),
            str(ROOT),
        ],
        check=True,
    )
    (wheel,) = (tmp_path / "dist").glob("memorepair-*.whl")
    target = tmp_path / "site"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "-q",
            "--no-deps",
            "--target",
            str(target),
            str(wheel),
        ],
        check=True,
    )
    probe = (
        "import sys; sys.path.insert(0, sys.argv[1]);"
        "import memorepair, memorepair.queries as q, memorepair.local.server as ls;"
        "from memorepair import sample;"
        "assert 'site' in memorepair.__file__, memorepair.__file__;"
        "names = q.all_names(); [q.load(n) for n in names];"
        "assert 'barrier/withdraw_cascade' in names;"
        "assert ls.pom_path().is_file();"
        "assert sample.path('memory.jsonl').is_file();"
        "from memorepair.show import CascadeView, Node;"
        "page = CascadeView('e', 'delete', 'plan', 'plan', '', "
        "(Node('r', 1, 'record', None, True, 'root_deleted'),)).html();"
        "assert 'outcome-root_deleted' in page and 'cascade-data' in page, page[:200];"
        "print(len(names))"
    )
    # The test's own interpreter has the dependencies; the wheel goes first on the path.
    out = subprocess.run(
        [sys.executable, "-c", probe, str(target)],
        cwd=tmp_path,
        check=True,
        capture_output=True,
        text=True,
    )
    assert int(out.stdout) > 30
