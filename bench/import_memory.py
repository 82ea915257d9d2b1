"""Peak memory of `import` for two file sizes: the import streams, so it stays flat.

Writes two memory files with the same number of artifacts and small or large contents,
imports each into a fresh namespace of the configured server (the local one by default:
`memorepair neo4j start` first) in a child process, and prints each child's peak RSS.
For contrast it also prints the peak RSS of parsing the whole file at once
(`interchange.parse_lines`, what `import` held before it streamed). Figures, not a test.

    .venv/bin/python -m bench.import_memory [--artifacts 4000] [--sizes 1024,32768]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

IMPORT = """
import sys
from pathlib import Path
from memorepair.api import open_store
with open_store(ns=sys.argv[2]) as memory:
    memory.apply_schema()
    report = memory.import_file(Path(sys.argv[1]))
    memory.clear()
print(report.written)
"""

PARSE_WHOLE = """
import sys
from memorepair.interchange import parse_lines
with open(sys.argv[1], encoding="utf-8") as handle:
    memory = parse_lines(handle)
print(len(memory.artifacts))
"""


def write_memory(path: Path, artifacts: int, content_bytes: int) -> None:
    """Records, each summarised by a summary of the one before (a chain of inputs)."""
    filler = "x" * content_bytes
    with path.open("w", encoding="utf-8") as handle:
        for i in range(artifacts):
            line: dict[str, object] = {
                "type": "artifact",
                "uid": f"a{i}",
                "kind": "record",
                "content": filler,
            }
            if i:
                line |= {"kind": "summary", "inputs": [f"a{i - 1}"]}
            handle.write(json.dumps(line) + "\n")


def peak_rss_mb(script: str, *args: str) -> tuple[float, str]:
    """Run `python -c script args` and return its peak RSS (MiB) and its output."""
    with tempfile.TemporaryFile("w+") as out:
        proc = subprocess.Popen([sys.executable, "-c", script, *args], stdout=out)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        text = out.read().strip()
    if proc.returncode != 0:
        raise SystemExit(f"child failed with {proc.returncode}: {text}")
    return usage.ru_maxrss / 1024, text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--artifacts", type=int, default=4000, help="artifacts per file")
    parser.add_argument(
        "--sizes", default="1024,32768", help="content bytes per artifact, comma-separated"
    )
    args = parser.parse_args(argv)
    print(f"{'file MiB':>9} {'import peak RSS MiB':>20} {'whole-file parse peak RSS MiB':>30}")
    with tempfile.TemporaryDirectory() as folder:
        for size in (int(s) for s in args.sizes.split(",")):
            path = Path(folder) / f"memory-{size}.jsonl"
            write_memory(path, args.artifacts, size)
            ns = f"bench-import-{uuid.uuid4().hex[:8]}"
            streamed, written = peak_rss_mb(IMPORT, str(path), ns)
            whole, _ = peak_rss_mb(PARSE_WHOLE, str(path))
            assert int(written) == args.artifacts
            mib = path.stat().st_size / (1 << 20)
            print(f"{mib:9.1f} {streamed:20.1f} {whole:30.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
