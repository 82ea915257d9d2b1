"""Configuration trust: a folder's `.env` is never read unless the operator names it.

Everything here runs `load_settings` or the CLI in a folder the test controls, with the
variables a developer might have exported removed first.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from memorepair.api import connect
from memorepair.cli import cli
from memorepair.errors import ConfigError
from memorepair.settings import RepairConfig, Settings, describe, load_settings

HOSTILE = {
    "NEO4J_URI": "bolt://attacker.example:7687",
    "NEO4J_USERNAME": "stolen",
    "NEO4J_PASSWORD": "folder-password",
    "MEMOREPAIR_JAVA_HOME": "/tmp/evil-java",
    "MEMOREPAIR_STATE_DIR": "/tmp/evil-state",
    "MEMOREPAIR_LLM_BASE_URL": "http://attacker.example/v1",
    "MEMOREPAIR_LLM_API_KEY": "folder-key",
    "MEMOREPAIR_NAMESPACE": "elsewhere",
}


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for name in list(os.environ):
        if name.startswith(("MEMOREPAIR_", "NEO4J_")):
            monkeypatch.delenv(name)
    return monkeypatch


@pytest.fixture
def hostile_folder(tmp_path: Path, clean_env: pytest.MonkeyPatch) -> Path:
    (tmp_path / ".env").write_text(
        "".join(f"{k}={v}\n" for k, v in HOSTILE.items()), encoding="utf-8"
    )
    clean_env.chdir(tmp_path)
    return tmp_path


def test_a_folders_env_file_is_not_read(hostile_folder: Path) -> None:
    settings = load_settings()
    defaults = Settings.model_construct()
    assert settings.neo4j_uri is None and settings.uses_local_server
    assert settings.neo4j_password is None and settings.neo4j_username == "neo4j"
    assert settings.java_home is None
    assert settings.state_dir == defaults.state_dir
    assert settings.llm_base_url is None and settings.llm_api_key is None
    assert settings.namespace == "default"


def test_a_named_env_file_is_read(hostile_folder: Path, clean_env: pytest.MonkeyPatch) -> None:
    named = load_settings(env_file=hostile_folder / ".env")
    assert named.neo4j_uri == HOSTILE["NEO4J_URI"]
    assert named.java_home == Path(HOSTILE["MEMOREPAIR_JAVA_HOME"])
    clean_env.setenv("MEMOREPAIR_ENV_FILE", str(hostile_folder / ".env"))
    assert load_settings().state_dir == Path(HOSTILE["MEMOREPAIR_STATE_DIR"])
    # the environment still wins over the file, and an override over both
    clean_env.setenv("NEO4J_URI", "bolt://127.0.0.1:7999")
    assert load_settings().neo4j_uri == "bolt://127.0.0.1:7999"
    assert load_settings(neo4j_uri=None).neo4j_uri is None


def test_an_env_file_others_can_write_is_refused(hostile_folder: Path) -> None:
    env = hostile_folder / ".env"
    env.chmod(0o666)
    with pytest.raises(ConfigError, match="writable by other users"):
        load_settings(env_file=env)
    with pytest.raises(ConfigError, match="No such file"):
        load_settings(env_file=hostile_folder / "missing.env")
    if os.geteuid() == 0:  # a file another user owns (root can hand it over to test this)
        env.chmod(0o644)
        os.chown(env, 54321, -1)
        with pytest.raises(ConfigError, match="belongs to another user"):
            load_settings(env_file=env)


def test_config_show_names_sources_and_masks_secrets(
    hostile_folder: Path, clean_env: pytest.MonkeyPatch
) -> None:
    clean_env.setenv("NEO4J_PASSWORD", "env-password")
    clean_env.setenv("MEMOREPAIR_BOLT_PORT", "7722")
    env = hostile_folder / ".env"
    result = CliRunner().invoke(cli, ["--env-file", str(env), "config", "show", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    rows = {row["variable"]: row for row in data["settings"]}
    assert data["env_file"] == str(env)
    assert rows["NEO4J_PASSWORD"] == {
        "field": "neo4j_password",
        "variable": "NEO4J_PASSWORD",
        "value": "********",
        "source": "environment",
        "unit": "",
    }
    assert rows["MEMOREPAIR_LAMBDA"]["unit"].startswith("reads per second of repair")
    assert rows["MEMOREPAIR_COSTS"]["unit"] == "seconds of repair work"
    assert rows["MEMOREPAIR_BOLT_PORT"]["value"] == 7722
    assert rows["MEMOREPAIR_BOLT_PORT"]["source"] == "environment"
    assert rows["NEO4J_URI"] == {**rows["NEO4J_URI"], "source": "env file"}
    assert rows["MEMOREPAIR_LLM_API_KEY"]["value"] == "********"
    assert rows["MEMOREPAIR_LAMBDA"]["source"] == "default"
    assert set(rows) >= {"MEMOREPAIR_LLM_TIMEOUT_S", "MEMOREPAIR_LLM_ALLOW_INSECURE_HTTP"}
    for secret in ("env-password", "folder-password", "folder-key"):
        assert secret not in result.output
    # without --env-file the folder's file is ignored, and config show says so
    plain = CliRunner().invoke(cli, ["config", "show"])
    assert plain.exit_code == 0, plain.output
    assert "./.env is not read" in plain.output
    assert "attacker.example" not in plain.output


def test_describe_reports_overrides_and_masks_uri_credentials(
    clean_env: pytest.MonkeyPatch,
) -> None:
    settings = load_settings(neo4j_uri="neo4j+s://admin:hunter2@db.example:7687")
    rows = {r.field: r for r in describe(settings, None, {"neo4j_uri": settings.neo4j_uri})}
    assert rows["neo4j_uri"].source == "override"
    assert rows["neo4j_uri"].value == "neo4j+s://********@db.example:7687"


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("MEMOREPAIR_LAMBDA", "nan"),
        ("MEMOREPAIR_LLM_TIMEOUT_S", "inf"),
        ("MEMOREPAIR_BUSY_WAIT_S", "NaN"),
        ("MEMOREPAIR_COSTS", '{"cache": NaN}'),
    ],
)
def test_non_finite_settings_are_refused(
    clean_env: pytest.MonkeyPatch, variable: str, value: str
) -> None:
    clean_env.setenv(variable, value)
    with pytest.raises(ConfigError, match=variable):
        load_settings()


def test_a_folder_without_local_state_is_told_where_to_look(
    tmp_path: Path, clean_env: pytest.MonkeyPatch
) -> None:
    """No server URI and no local state: a clear error naming the state folder, and no
    stray state folder (with a guessed password) left behind."""
    clean_env.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    clean_env.chdir(tmp_path)
    with pytest.raises(ConfigError) as refused:
        connect(load_settings())
    assert f"no local Neo4j state in {tmp_path / 'data' / 'memorepair'}" in str(refused.value)
    assert "MEMOREPAIR_STATE_DIR" in str(refused.value)
    assert not (tmp_path / "data" / "memorepair").exists()
    assert not (tmp_path / ".memorepair").exists()


def test_the_default_state_folder_is_per_user_not_per_working_folder(
    tmp_path: Path, clean_env: pytest.MonkeyPatch
) -> None:
    """From any folder (an app's, an MCP host's), the same local server by default."""
    clean_env.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    folders = [tmp_path / "app", tmp_path / "elsewhere"]
    found = set()
    for folder in folders:
        folder.mkdir()
        clean_env.chdir(folder)
        found.add(load_settings().state_dir)
    assert found == {tmp_path / "data" / "memorepair"}
    assert RepairConfig().state_dir == tmp_path / "data" / "memorepair"
