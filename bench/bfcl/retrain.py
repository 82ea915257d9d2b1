"""The neural router's retrain after a turn deletion (prints figures; asserts nothing).

On the BFCL memory's tool router (every labelled user turn), each of ``--deletes`` turns
spread over the training set is deleted in turn and the ``param`` operator repairs the
router as a delete event's repair would: ``build`` (retrain from scratch on what is left)
then ``validate`` (manifest, forgetting, retained accuracy). Printed per memory: the
examples, the build's and validation's seconds (median over deletions and repeats, wall
and CPU), and whether every successor validated and equals a from-scratch training on
the retained turns. No Neo4j is needed. The machine is shared, so the load average is
printed beside the seconds: compare runs made together.

Run: ``python -m bench.bfcl.retrain [--tasks 48,0] [--deletes 3] [--repeats 3]``
(``0``: every conforming task, 199 per category).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass

from bench.bfcl.builder import NEURAL_UID, as_support, build_memory, conforming
from bench.bfcl.data import DEFAULT_CATEGORY, load_tasks
from memorepair.model import Artifact, EventType, Visibility
from memorepair.operators.base import RepairContext, Support
from memorepair.operators.neural import train_neural_skill
from memorepair.operators.param import ParamOperator


@dataclass(frozen=True)
class RetrainRow:
    category: str
    tasks: int
    examples: int
    deletes: int
    build_s: float
    validate_s: float
    total_s: float
    total_cpu_s: float
    validated: bool
    from_scratch: bool
    load: float


def _withdrawn(item: Support | Artifact) -> Artifact:
    return Artifact(
        uid=item.uid,
        version=item.version,
        ns="bench",
        kind=item.kind,
        arch=item.arch,
        content=item.content,
        meta=dict(item.meta),
        visibility=Visibility.WITHDRAWN,
    )


def contexts(category: str, tasks: int, deletes: int) -> tuple[int, int, list[RepairContext]]:
    """The router's repair context after each of ``deletes`` evenly spread turn deletions."""
    if tasks <= 0:
        tasks = len(conforming(load_tasks(category)))
    memory = build_memory(tasks, category=category)
    by_uid = memory.by_uid()
    router = by_uid[NEURAL_UID]
    turns = [as_support(by_uid[u]) for u in router.inputs]
    picks = [turns[i * len(turns) // deletes] for i in range(deletes)]
    skill = _withdrawn(as_support(router))
    out = [
        RepairContext(
            event_type=EventType.DELETE,
            artifact=skill,
            support=tuple(t for t in turns if t.uid != gone.uid),
            invalidated=(_withdrawn(gone), skill),
        )
        for gone in picks
    ]
    return len(memory.tasks), len(turns), out


def measure(ctx: RepairContext, op: ParamOperator) -> tuple[float, float, float, bool, bool]:
    """Build and validate once: seconds, CPU seconds, validated, equal to from scratch."""
    started, cpu = time.perf_counter(), time.thread_time()
    successor = op.build(ctx)
    built = time.perf_counter()
    verdict = op.validate(ctx, successor)
    ended, cpu_s = time.perf_counter(), time.thread_time() - cpu
    scratch = successor.content == train_neural_skill(list(ctx.support))
    return built - started, ended - built, cpu_s, verdict.ok, scratch


def run(category: str, tasks: int, deletes: int, repeats: int) -> RetrainRow:
    n_tasks, examples, ctxs = contexts(category, tasks, deletes)
    op = ParamOperator()
    runs = [measure(c, op) for _ in range(repeats) for c in ctxs]
    return RetrainRow(
        category=category,
        tasks=n_tasks,
        examples=examples,
        deletes=deletes,
        build_s=statistics.median(r[0] for r in runs),
        validate_s=statistics.median(r[1] for r in runs),
        total_s=statistics.median(r[0] + r[1] for r in runs),
        total_cpu_s=statistics.median(r[2] for r in runs),
        validated=all(r[3] for r in runs),
        from_scratch=all(r[4] for r in runs),
        load=os.getloadavg()[0],
    )


def table(rows: Sequence[RetrainRow]) -> str:
    head = (
        f"{'category':<24}{'tasks':>6}{'examples':>9}{'build s':>9}{'valid. s':>9}"
        f"{'total s':>9}{'cpu s':>8}  validated  from-scratch  load"
    )
    lines = [head]
    for r in rows:
        lines.append(
            f"{r.category:<24}{r.tasks:>6}{r.examples:>9}{r.build_s:>9.3f}{r.validate_s:>9.3f}"
            f"{r.total_s:>9.3f}{r.total_cpu_s:>8.3f}  {r.validated!s:<9}  {r.from_scratch!s:<12}"
            f"  {r.load:.1f}"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--category", default=DEFAULT_CATEGORY)
    parser.add_argument(
        "--tasks", default="48,0", help="comma-separated memory sizes (0: every task)"
    )
    parser.add_argument("--deletes", type=int, default=3, help="turn deletions per memory")
    parser.add_argument("--repeats", type=int, default=3, help="times each deletion is repaired")
    parser.add_argument("--json", action="store_true", help="rows as JSON")
    args = parser.parse_args(argv)
    sizes = [int(t) for t in args.tasks.split(",")]
    rows = [run(args.category, n, args.deletes, args.repeats) for n in sizes]
    if args.json:
        print(json.dumps([asdict(r) for r in rows], indent=2))
    else:
        print(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
