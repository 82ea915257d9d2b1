"""An auditor's session in Neo4j Browser, served by the local server (`neo4j start --browser`).

A second local server of its own (its own state folder and free ports, the jars shared
with the session's server) is started with the Browser, the sample's correct event is
repaired on it, and headless Chromium logs in to the Browser, sets the parameters and
runs `cypher/audit/event_sets.cypher` as an auditor pastes it.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import chromium
import pytest
from tests.servers import free_port, private_settings

from memorepair import queries, sample
from memorepair.api import open_store
from memorepair.errors import ServerError
from memorepair.local.server import LocalServer
from memorepair.settings import Settings

EVENT = "sample-correct-budget"


@pytest.fixture
def browser_server(neo4j_settings: Settings, tmp_path: Path) -> Iterator[LocalServer]:
    if not neo4j_settings.uses_local_server:
        pytest.skip("NEO4J_URI names another server; the Browser is the local server's")
    chromium.executable()
    LocalServer(neo4j_settings).ensure_jars()  # the private server links them
    settings = private_settings(tmp_path, neo4j_settings, http_port=free_port())
    server = LocalServer(settings)
    status = server.start(browser=True)
    try:
        assert status.browser == server.browser_url
        yield server
    finally:
        server.stop()


def test_an_auditor_runs_event_sets_in_neo4j_browser(browser_server: LocalServer) -> None:
    settings = browser_server.settings
    conf = (browser_server.conf_dir / "neo4j.conf").read_text()
    assert f"server.http.listen_address=127.0.0.1:{settings.http_port}" in conf
    assert "client.allow_telemetry=false" in conf
    with open_store(ns="audit", settings=settings) as memory:
        memory.apply_schema()
        memory.import_file(sample.path("memory.jsonl"))
        report = memory.repair(sample.path("event-correct.json"))
    assert report.event == EVENT
    body = queries.load("audit/event_sets").text  # the file as pasted, comments aside
    shown = _browser_session(
        browser_server, [":param ns => 'audit'", f":param event => '{EVENT}'", body]
    )
    assert '"root_replaced"' in shown and '"published"' in shown
    for uid in report.outcomes["published"]:
        assert f'"{uid}"' in shown


def _browser_session(server: LocalServer, commands: list[str]) -> str:
    """Log in with the generated password, run each command, return the page's text."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=chromium.executable(), args=chromium.FLAGS, headless=True
        )
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            page.goto(server.browser_url)
            page.fill("input[type=password]", server.password(), timeout=60_000)
            page.get_by_test_id("connect").click()
            page.wait_for_selector("text=You are connected", timeout=60_000)
            frames = "document.querySelectorAll('[data-testid=\"frame\"]').length"
            for command in commands:
                before = page.evaluate(frames)
                page.locator("#monaco-main-editor").first.click()
                page.keyboard.insert_text(command)
                page.keyboard.press("Control+Enter")
                # each command opens one result frame; wait for it before the next (polled
                # from here: the Browser's content policy forbids in-page evaluation)
                for _ in range(600):
                    if page.evaluate(frames) > before:
                        break
                    page.wait_for_timeout(100)
            page.wait_for_selector("text=Started streaming", timeout=60_000)
            return page.inner_text("body")
        finally:
            browser.close()


def test_a_server_running_without_the_browser_is_not_changed(neo4j_settings: Settings) -> None:
    if not neo4j_settings.uses_local_server:
        pytest.skip("NEO4J_URI names another server")
    server = LocalServer(neo4j_settings)
    assert server.status().running and server.status().browser is None
    with pytest.raises(ServerError, match="neo4j stop && memorepair neo4j start --browser"):
        server.start(browser=True)
    assert server.status().running
