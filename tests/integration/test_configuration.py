"""Configuration reaches every repair the same way: settings -> operators, fresh or resumed.

Two bugs this guards against: `MEMOREPAIR_LLM_BASE_URL` never registered the LLM regen
operator, and `resume` ran operators with other limits than a fresh run (regen's content
limit fell back to 20,000 characters instead of MEMOREPAIR_MAX_CONTENT_BYTES).
"""

from __future__ import annotations

from pathlib import Path

from llm_server import chat_server
from reliability_support import start_paused, write_event

from memorepair.api import MemoryStore, open_store
from memorepair.model import ArtifactIn, Kind
from memorepair.settings import Settings


def _summary_memory(n: int, sentence: str) -> list[ArtifactIn]:
    """n records and one summary over all of them."""
    records = [
        ArtifactIn(uid=f"r{i:03d}", kind=Kind.RECORD, content=f"{sentence} Record {i}.")
        for i in range(n)
    ]
    summary = ArtifactIn(
        uid="digest",
        kind=Kind.SUMMARY,
        content="(first version)",
        inputs=[r.uid for r in records],
    )
    return [*records, summary]


def test_llm_base_url_registers_llm_regen(neo4j_settings: Settings, memory: MemoryStore) -> None:
    with chat_server() as (base_url, received):
        configured = neo4j_settings.model_copy(
            update={"llm_base_url": base_url, "llm_model": "stub-model"}
        )
        with open_store(ns=memory.ns, settings=configured) as llm_memory:
            llm_memory.import_items(_summary_memory(3, "Ana prefers window seats."))
            report = llm_memory.repair({"id": "forget-r002", "type": "delete", "roots": ["r002"]})
            [served] = llm_memory.retrieve(uid="digest")
    assert report.published == ["digest"]
    assert served.meta.get("operator") == "llm"
    assert served.content.splitlines() == [
        "- Reworded: Ana prefers window seats. Record 0. [r000@v1]",
        "- Reworded: Ana prefers window seats. Record 1. [r001@v1]",
    ]
    [request] = received.requests
    assert request["path"] == "/v1/chat/completions"
    assert request["body"]["model"] == "stub-model"
    assert "Record 2" not in str(request["body"])  # the deleted record never reaches the model


def test_resume_runs_with_the_limits_of_a_fresh_run(
    neo4j_settings: Settings, memory: MemoryStore, tmp_path: Path
) -> None:
    """A summary longer than 20,000 characters validates fresh and after a crash alike."""
    sentence = "Travel note " + "with plenty of detail " * 8  # ~190 characters per line
    memory.import_items(_summary_memory(150, sentence))
    fresh = memory.plan({"id": "probe", "type": "delete", "roots": ["r000"]})
    assert fresh.selected == ("digest",)
    event = write_event(tmp_path, {"id": "forget-r000", "type": "delete", "roots": ["r000"]})
    start_paused(neo4j_settings, memory.ns, event, "forget-r000", "staged").kill()
    [report] = memory.resume("forget-r000")
    assert report.resumed_from == "staged"
    assert report.published == ["digest"], report.details
    [served] = memory.retrieve(uid="digest")
    assert len(served.content) > 20_000
    assert memory.settings.max_content_bytes >= len(served.content)
