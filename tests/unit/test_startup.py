"""What a command pays before it runs: the CLI and the API import no solver until one
selects (igraph's own import looks for matplotlib, most of a second where installed)."""

from __future__ import annotations

import subprocess
import sys

HEAVY = ("igraph", "ortools", "matplotlib")


def test_importing_the_api_and_the_cli_leaves_the_solvers_unimported() -> None:
    probe = (
        "import sys, memorepair.api, memorepair.cli; "
        f"print(','.join(m for m in {HEAVY!r} if m in sys.modules))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=120
    )
    assert done.stdout.strip() == "", f"imported at start-up: {done.stdout.strip()}"
