"""What `neo4j start` reads from the server's debug.log while it waits for Bolt."""

from __future__ import annotations

from pathlib import Path

from memorepair.local.server import read_from, recovery_percent

# Lines as Neo4j 5.26 wrote them here, replaying its log after a SIGKILL mid-shutdown.
RECOVERING = """\
2026-12-03 11:25:30.101+0000 INFO  [o.n.k.d.Database] [neo4j/503f429d] Starting...
2026-12-03 11:25:37.505+0000 INFO  [o.n.k.r.Recovery] [neo4j/503f429d]  10% completed
2026-12-03 11:25:42.711+0000 INFO  [o.n.k.r.Recovery] [neo4j/503f429d]  20% completed
2026-12-03 11:26:52.700+0000 INFO  [o.n.k.r.Recovery] [neo4j/503f429d]  80% completed
2026-12-03 11:26:53.002+0000 INFO  [o.n.k.d.Database] [neo4j/503f429d] 5% of heap used
"""


def test_the_last_recovery_step_is_reported() -> None:
    assert recovery_percent(RECOVERING) == 80
    assert recovery_percent(RECOVERING.splitlines(keepends=True)[1]) == 10


def test_no_recovery_no_figure() -> None:
    clean = "2026-12-03 11:00:04.387+0000 INFO  [o.n.k.d.Database] 50% of heap used\n"
    assert recovery_percent(clean) is None
    assert recovery_percent("") is None


def test_only_lines_after_the_start_count(tmp_path: Path) -> None:
    log = tmp_path / "debug.log"
    assert read_from(log, 0) == ""  # not written yet
    log.write_text(RECOVERING, encoding="utf-8")  # a recovery of an earlier start
    offset = log.stat().st_size
    assert recovery_percent(read_from(log, offset)) is None
    with open(log, "a", encoding="utf-8") as file:
        file.write(
            "2026-12-03 12:00:00.000+0000 INFO  [o.n.k.r.Recovery] [neo4j/x]  30% completed\n"
        )
    assert recovery_percent(read_from(log, offset)) == 30


def test_a_rotated_log_is_read_from_its_start(tmp_path: Path) -> None:
    log = tmp_path / "debug.log"
    log.write_text("2026-12-03 12:00:00.000+0000 INFO  [o.n.k.r.Recovery] [n]  40% completed\n")
    assert recovery_percent(read_from(log, 10_000_000)) == 40
