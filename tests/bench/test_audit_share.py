"""The lean engine of `bench.audit_share` stands in for the engine's statements exactly
where it says, and only inside its block.

Its figures count only if the swap is the one described: same parameters as the
statements replaced (so a repair runs through it unchanged), none of the audit writes it
claims to drop, and the engine's own statements back once the block ends, error or not.
"""

from __future__ import annotations

import math
import re

import pytest

from bench import audit_share
from memorepair import cascade, publication

ENGINE = {
    "publish_fresh": publication.PUBLISH_FRESH,
    "record_candidates": cascade.RECORD_CANDIDATES,
}
LEAN = {
    "publish_fresh": audit_share.LEAN_PUBLISH_FRESH,
    "record_candidates": audit_share.LEAN_RECORD_CANDIDATES,
}


@pytest.mark.parametrize("name", sorted(ENGINE))
def test_a_lean_statement_takes_the_engines_parameters(name: str) -> None:
    assert LEAN[name].declared == ENGINE[name].declared
    assert LEAN[name].mode == ENGINE[name].mode == "write"


def test_lean_publication_drops_the_audit_writes_and_keeps_the_floors() -> None:
    engine, lean = ENGINE["publish_fresh"].text, LEAN["publish_fresh"].text
    for audit in (":PUBLISHED", ":WITHDREW", ":RELATED", "validation", "operator", "work_s"):
        assert audit in engine
        assert audit not in lean
    for floor in (":SUPERSEDES", ":INFLUENCES", "SET old:Superseded", "Artifact:Head:Live"):
        assert floor in lean


def test_lean_recording_writes_no_candidate_facts() -> None:
    written = set(re.findall(r"\bw\.(\w+)\s*=", LEAN["record_candidates"].text))
    assert written == {"at", "root", "selected"}
    facts = set(re.findall(r"\bw\.(\w+)\s*=", ENGINE["record_candidates"].text))
    assert {"mode", "reason", "value", "cost", "selected"} <= facts


def test_the_engines_statements_come_back_after_the_block_even_on_error() -> None:
    with pytest.raises(RuntimeError), audit_share.lean_statements():
        assert publication.PUBLISH_FRESH is audit_share.LEAN_PUBLISH_FRESH
        assert cascade.RECORD_CANDIDATES is audit_share.LEAN_RECORD_CANDIDATES
        raise RuntimeError("a repair failed")
    assert publication.PUBLISH_FRESH is ENGINE["publish_fresh"]
    assert cascade.RECORD_CANDIDATES is ENGINE["record_candidates"]
    with audit_share.lean_statements(lean=False):
        assert publication.PUBLISH_FRESH is ENGINE["publish_fresh"]


def test_rounds_alternate_which_engine_goes_first() -> None:
    assert audit_share.order_of(1) == ("engine", "lean")
    assert audit_share.order_of(2) == ("lean", "engine")


def test_execution_cpu_counts_only_whole_spans_of_the_step() -> None:
    cpu = audit_share.ExecutionCpu(None)  # no local server: its CPU is unknown
    cpu("candidates", 0, 1)
    cpu("execution", 0, 1)
    assert all(math.isnan(x) for x in cpu.seconds())  # started, not ended
    cpu("execution", 1, 1)
    cpu("execution", 10, 20)  # a batch's progress, not the step's
    server, python = cpu.seconds()
    assert math.isnan(server)
    assert python >= 0.0


def test_packed_takes_executions_cpu_over_two_cores_in_place_of_its_wall_time() -> None:
    run = audit_share.Run(
        "engine", 1, {"execution": 30.0, "record": 5.0}, 44.0, 22.0, exec_cpu=(33.0, 11.0)
    )
    assert run.packed == 44.0 - 30.0 + 22.0
    assert run.packed / run.floor == pytest.approx(36.0 / 22.0)
    assert run.ratio == 2.0
