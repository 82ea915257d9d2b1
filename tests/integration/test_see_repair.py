"""Seeing a repair before and after it happens: `show`, `plan --diff`, and progress.

The demo's memory and its three events, run through the CLI as an operator would; the
pages are opened in headless Chromium and checked box by box against the audit trail.
"""

from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import chromium
import pytest
from click.testing import CliRunner

from memorepair import audit, sample
from memorepair.api import MemoryStore
from memorepair.cli import cli

EVENTS = ("event-delete.json", "event-correct.json", "event-migrate.json")
PNG = b"\x89PNG\r\n\x1a\n"


def run(memory: MemoryStore, *args: str) -> Any:
    result = CliRunner().invoke(cli, ["--ns", memory.ns, *args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout) if "--json" in args else result


class _Boxes(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.boxes: dict[str, set[str]] = {}
        self.ready = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = {k: v or "" for k, v in attrs}
        if tag == "body" and found.get("data-ready") == "true":
            self.ready = True
        if tag == "g" and "data-uid" in found:
            self.boxes[found["data-uid"]] = set(found.get("class", "").split())


@pytest.fixture
def repaired(memory: MemoryStore) -> MemoryStore:
    """The sample memory with its three events planned (before) and repaired, in order."""
    memory.import_file(sample.path("memory.jsonl"))
    return memory


def test_show_draws_every_cascade_node_with_its_outcome_in_chromium(
    repaired: MemoryStore, tmp_path: Path
) -> None:
    for name in EVENTS:
        event = run(repaired, "repair", str(sample.path(name)), "--json", "--quiet")["event"]
        page = tmp_path / f"{event}.html"
        written = run(repaired, "show", event, "-o", str(page)).stdout
        assert written.startswith(f"wrote {page}")
        dom = _Boxes()
        dom.feed(chromium.dump_dom(page.as_uri()))
        assert dom.ready, "the page's script did not run"
        _, rows = audit.event_cascade(repaired.store, repaired.ns, event)
        assert {r["uid"] for r in rows} == set(dom.boxes)
        for row in rows:
            assert f"outcome-{row['outcome']}" in dom.boxes[row["uid"]], row
        shot = chromium.screenshot(f"{page.as_uri()}#uid={rows[-1]['uid']}", tmp_path / "s.png")
        assert shot.read_bytes().startswith(PNG) and shot.stat().st_size > 10_000


def test_show_plan_predicts_what_the_repair_then_does(repaired: MemoryStore) -> None:
    """Before each event its plan's picture; after it the audit's: the same outcomes and
    the same successor contents, node by node (the dry run writes nothing)."""
    for name in EVENTS:
        before = run(repaired, "show", "--plan", str(sample.path(name)), "--json")
        assert repaired.audit_events() == [] or before["event"] not in {
            e["event"] for e in repaired.audit_events()
        }
        event = run(repaired, "repair", str(sample.path(name)), "--json", "--quiet")["event"]
        after = run(repaired, "show", event, "--json")
        predicted = {n["uid"]: (n["outcome"], n["after"]) for n in before["nodes"]}
        happened = {n["uid"]: (n["outcome"], n["after"]) for n in after["nodes"]}
        assert predicted == happened
        assert before["stage"] == "plan" and after["stage"] == "repair"


def test_plan_diff_shows_the_corrected_budget_in_the_successor(repaired: MemoryStore) -> None:
    event = str(sample.path("event-correct.json"))
    data = run(repaired, "plan", event, "--diff", "--json")
    assert repaired.audit_events() == []  # nothing written: no event node
    assert repaired.counts()["staged"] == 0
    changes = {c["uid"]: c for c in data["diff"]["changes"]}
    skill = changes["skill-convert-format"]
    assert skill["outcome"] == "published"
    assert "1200" in skill["before"] and "1500" in skill["after"]
    assert '-        "amount": 1200,' in skill["diff"]
    assert '+        "amount": 1500,' in skill["diff"]
    assert changes["call-01"]["outcome"] == "root_replaced"
    human = run(repaired, "plan", event, "--diff").stdout
    assert '+        "amount": 1500,' in human
    assert "outcomes if repaired now: published 5, root_replaced 1" in human


def test_plan_diff_lists_what_would_stay_withdrawn_and_why(repaired: MemoryStore) -> None:
    data = run(repaired, "plan", str(sample.path("event-delete.json")), "--diff", "--json")
    stays = {w["uid"]: w for w in data["diff"]["withdrawn"]}
    assert stays["skill-router"]["outcome"] == "unselected"
    assert stays["call-02"]["outcome"] == "removed" and stays["call-02"]["reason"]
    assert stays["turn-03"]["outcome"] == "root_deleted"


def test_progress_goes_to_stderr_as_lines_and_quiet_silences_it(
    repaired: MemoryStore, tmp_path: Path
) -> None:
    event = str(sample.path("event-delete.json"))
    plain = CliRunner().invoke(cli, ["--ns", repaired.ns, "repair", event, "--json"])
    assert plain.exit_code == 0, plain.output
    assert json.loads(plain.stdout)["status"] == "completed"  # stdout stays JSON
    steps = [line.split()[0] for line in plain.stderr.splitlines()]
    assert {"barrier", "candidates", "selection", "execute", "publication"} <= set(steps)
    out = tmp_path / "export.jsonl"
    quiet = run(repaired, "export", str(out), "--quiet")
    assert quiet.stderr == ""
    loud = run(repaired, "export", str(out), "--force")
    assert "export" in loud.stderr and "done in" in loud.stderr


def test_show_says_erased_where_a_delete_redacted_the_content(repaired: MemoryStore) -> None:
    event = run(repaired, "repair", str(sample.path("event-delete.json")), "--json", "--quiet")
    view = run(repaired, "show", event["event"], "--json")
    nodes = {n["uid"]: n for n in view["nodes"]}
    key = f"{repaired.ns}/{event['event']}"
    for uid in ("turn-03", "sum-zurich"):  # the root, and a version derived from it
        assert nodes[uid]["erased"] is True and nodes[uid]["before"] is None
        assert nodes[uid]["erased_by"] == key
    assert nodes["sum-zurich"]["after"] and "hotel" not in nodes["sum-zurich"]["after"]
    page = repaired.show(event["event"]).html()
    assert '"erased": true' in page and f'"erased by", "{key}"' in page
