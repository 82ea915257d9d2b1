"""The MCP host entry the docs show is what `memorepair mcp --print-config` prints: an
absolute command and the settings that reach the server, so it works from any folder."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from tests.servers import free_port

from memorepair.cli import cli

ROOT = Path(__file__).resolve().parents[2]
BLOCK = re.compile(r"```json\n(.*?)```", re.S)


def _entries(page: Path) -> list[dict[str, object]]:
    """The stdio entries a page shows (an `--http` server's entry is a `url` instead)."""
    blocks = [json.loads(b) for b in BLOCK.findall(page.read_text(encoding="utf-8"))]
    servers = [b["mcpServers"]["memory"] for b in blocks if "mcpServers" in b]
    return [entry for entry in servers if "command" in entry]


@pytest.mark.parametrize("page", ["README.md", "docs/agents.md"])
def test_the_docs_host_entry_has_the_printed_shape(
    page: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = (ROOT / page).read_text(encoding="utf-8")
    assert "mcp --print-config" in text
    (entry,) = _entries(ROOT / page)
    assert isinstance(entry["command"], str) and Path(entry["command"]).is_absolute()
    assert entry["args"] == ["--ns", "team-a", "mcp"]
    for name in [n for n in os.environ if n.startswith(("MEMOREPAIR_", "NEO4J_"))]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("MEMOREPAIR_BOLT_PORT", str(free_port()))  # no server answers there
    monkeypatch.chdir(tmp_path)
    printed = CliRunner().invoke(cli, ["--ns", "team-a", "mcp", "--print-config"])
    assert printed.exit_code == 0, printed.output
    made = json.loads(printed.stdout)["mcpServers"]["memory"]
    assert made["args"] == entry["args"] and Path(made["command"]).is_absolute()
    assert isinstance(entry["env"], dict) and made["env"].keys() == entry["env"].keys()
    assert made["env"]["MEMOREPAIR_STATE_DIR"] == str(tmp_path / "data" / "memorepair")
