"""The surfaces speak the API's vocabulary: every CLI command has help and is in the
README, and every MCP tool is a call of one `MemoryStore` method (no database needed)."""

from __future__ import annotations

import ast
import asyncio
import inspect
import textwrap
from collections.abc import Iterator
from pathlib import Path

import click
import pytest

from memorepair.api import MemoryStore
from memorepair.cli import cli

ROOT = Path(__file__).resolve().parents[2]


def _commands(
    group: click.Group, path: tuple[str, ...] = ()
) -> Iterator[tuple[str, click.Command]]:
    for name, command in sorted(group.commands.items()):
        if isinstance(command, click.Group):
            yield from _commands(command, (*path, name))
        else:
            yield " ".join((*path, name)), command


def test_every_cli_command_has_help_and_is_in_the_readme() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    commands = dict(_commands(cli))
    assert len(commands) > 20
    for name, command in commands.items():
        assert command.help and command.help.strip(), f"`memorepair {name}` has no help"
        assert f"memorepair {name}" in readme, f"`memorepair {name}` is not in the README"
        for param in command.params:
            if isinstance(param, click.Option):
                assert param.help, f"`memorepair {name}` option {param.opts} has no help"


mcp = pytest.importorskip("mcp")


def _store_calls(function: object) -> set[str]:
    """The `MemoryStore` methods a tool's source calls (on any receiver)."""
    source = textwrap.dedent(inspect.getsource(function))  # type: ignore[arg-type]
    methods = {name for name, _ in inspect.getmembers(MemoryStore, callable)}
    return {
        node.func.attr
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in methods
        and not node.func.attr.startswith("_")
    }


def test_every_mcp_tool_is_one_memory_store_method_with_a_typed_result() -> None:
    from mcp.shared.memory import create_connected_server_and_client_session

    from memorepair.integrations.mcp import TOOLS, MemoryTools, build_server

    for name, spec in TOOLS.items():
        assert callable(getattr(MemoryStore, spec.method)), (name, spec.method)
        assert _store_calls(getattr(MemoryTools, name)) == {spec.method}, name

    def unused() -> MemoryStore:
        raise AssertionError("listing tools opens no store")

    async def listed() -> list[object]:
        server = build_server(unused)
        async with create_connected_server_and_client_session(server._mcp_server) as client:
            return list((await client.list_tools()).tools)

    tools = {tool.name: tool for tool in asyncio.run(listed())}  # type: ignore[attr-defined]
    assert list(tools) == list(TOOLS)
    for name, tool in tools.items():
        assert tool.outputSchema and tool.outputSchema["properties"]["namespace"], name
        assert tool.annotations == TOOLS[name].annotations, name
        assert "namespace" in tool.inputSchema["properties"], name
