"""The benchmarks' command lines: one parser shape for every ``python -m bench.X``."""

from __future__ import annotations

import argparse


def parser(prog: str, doc: str | None) -> argparse.ArgumentParser:
    """A parser for `prog` whose description is the module docstring's first paragraph
    and whose epilog is the rest, as written (the sections each benchmark documents)."""
    head, _, rest = (doc or "").partition("\n\n")
    return argparse.ArgumentParser(
        prog=prog,
        description=head,
        epilog=rest or None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
