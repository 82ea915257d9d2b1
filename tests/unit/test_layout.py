"""The house's shape, read from the source: where each query file lives."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

from memorepair import queries

ENGINE = Path(__file__).resolve().parents[2] / "engine" / "memorepair"


def _module_path(path: Path) -> str:
    """`serving/search` for engine/memorepair/serving/search.py."""
    return path.relative_to(ENGINE).with_suffix("").as_posix()


def _named_queries() -> dict[str, list[str]]:
    """Every literal `queries.named("...")` of the engine, with the modules that name it."""
    names: dict[str, list[str]] = defaultdict(list)
    for path in sorted(ENGINE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and ast.unparse(node.func) == "queries.named"
                and node.args
                and isinstance(node.args[0], ast.Constant)
            ):
                names[str(node.args[0].value)].append(_module_path(path))
    return names


def test_each_query_file_lies_in_the_folder_of_the_one_module_that_names_it() -> None:
    """`cypher/<module>/<verb>_<object>.cypher`: a reader finds a module's queries beside
    its name, and a query that two modules run is named by one (the lower) and imported
    by the other, so each file has one owner."""
    named = _named_queries()
    twice = {name: modules for name, modules in named.items() if len(modules) > 1}
    assert twice == {}, "a query file named by more than one module"
    misplaced = {
        name: modules[0] for name, modules in named.items() if name.rsplit("/", 1)[0] != modules[0]
    }
    assert misplaced == {}, "query file outside its module's folder (cypher/<module>/)"
    # The schema folder is read whole by the store; every other file is named above.
    on_disk = {name for name in queries.all_names() if not name.startswith("schema/")}
    assert on_disk == set(named)
