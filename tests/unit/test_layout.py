"""The house's shape, read from the source: where each query file lives."""

from __future__ import annotations

import ast
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

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


# ---- the layers (shared/ARCHITECTURE.md's table) ---------------------------------------------
#: Each module's layer, top to bottom; a module imports only from its own layer or below.
LAYERS: dict[str, tuple[str, ...]] = {
    "surfaces": ("cli", "integrations/"),
    "the API": ("api", "changes", "access", "bearer", "sample/demo"),
    "one repair": ("repair",),
    "the steps": (
        "events",
        "cascade",
        "barrier",
        "replacement",
        "candidates",
        "selection",
        "execution",
        "validation",
        "publication",
        "erasure",
        "audit",
        "show",
        "values",
    ),
    "serving": ("serving/", "recording", "redaction", "importing", "embedding"),
    "plugins": ("operators/", "sample/"),
    "foundation": (
        "store",
        "queries",
        "local/",
        "settings",
        "model",
        "interchange",
        "codec",
        "graphs",
        "errors",
        "toolschema",
        "fingerprints",
        "faults",
        "credentials",
        "__init__",
    ),
}
ORDER = list(LAYERS)
#: What the surfaces may import: the API and the nouns (and each other: the CLI serves MCP).
SURFACE_MAY_IMPORT = ("api", "errors", "model", "settings")
#: The contract's nouns: they import nothing of the package but each other.
NOUNS = ("model", "errors")
#: Modules that may read `Settings`: the API builds every client from it, the surfaces load
#: it, and the launcher in `local/` is configured by the server's own settings.
READS_SETTINGS = ("api", "cli", "integrations/", "local/", "settings")


def _layer(module: str) -> int:
    """The index in ORDER of a module's layer (the longest matching entry wins)."""
    best = (-1, -1)
    for index, entries in enumerate(LAYERS.values()):
        for entry in entries:
            hit = module.startswith(entry) if entry.endswith("/") else module == entry
            if hit and len(entry) > best[0]:
                best = (len(entry), index)
    assert best[1] >= 0, f"{module} is in no layer of LAYERS: place it"
    return best[1]


def _module_of(name: str) -> str | None:
    """`memorepair.serving.search` -> `serving/search` (None: not the package)."""
    if name != "memorepair" and not name.startswith("memorepair."):
        return None
    parts = name.split(".")[1:]
    path = ENGINE.joinpath(*parts)
    if path.is_dir():
        return "/".join([*parts, "__init__"])
    return "/".join(parts) if path.with_suffix(".py").is_file() else None


def _imports() -> dict[str, set[str]]:
    """Every module of the package and what it imports (of the package, and `neo4j`),
    at any depth of the file: lazy imports count too."""
    found: dict[str, set[str]] = {}
    for path in sorted(ENGINE.rglob("*.py")):
        module = _module_path(path)
        names: set[str] = set()
        package = module.rsplit("/", 1)[0] if "/" in module else ""
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:  # from . import x, from .tools import y
                    base = ".".join(["memorepair", *package.split("/"), *base.split(".")])
                    base = base.rstrip(".")
                names.add(base)
                names.update(f"{base}.{alias.name}" for alias in node.names)
        found[module] = {
            n.split(".")[0] if n.split(".")[0] == "neo4j" else (_module_of(n) or "") for n in names
        } - {"", module}
    return found


def _violations() -> list[str]:
    broken = []
    for module, imported in _imports().items():
        for other in sorted(imported - {"neo4j"}):
            if _layer(other) < _layer(module):
                broken.append(f"{module} ({ORDER[_layer(module)]}) imports {other}")
    return broken


def test_each_module_imports_only_from_its_layer_or_below() -> None:
    """The table's rule: surfaces, the API, one repair, the steps, serving, plugins,
    foundation; an import from a higher layer is a module in the wrong room."""
    assert _violations() == []


def test_surfaces_speak_the_apis_vocabulary() -> None:
    """The CLI, MCP and LangGraph import the API and the nouns only, so behaviour (and
    permissions) are the same from every surface."""
    for module, imported in _imports().items():
        if ORDER[_layer(module)] == "surfaces":
            allowed = {m for m in imported if m in SURFACE_MAY_IMPORT}
            others = {m for m in imported if ORDER[_layer(m)] == "surfaces"}
            assert imported - allowed - others == set(), module


def test_only_the_store_talks_to_neo4j_and_nothing_below_repair_imports_it() -> None:
    imports = _imports()
    assert sorted(m for m, imported in imports.items() if "neo4j" in imported) == ["store"]
    repair = _layer("repair")
    assert [m for m, imported in imports.items() if "repair" in imported] == [
        m for m, imported in imports.items() if "repair" in imported and _layer(m) < repair
    ]


def test_the_nouns_import_nothing_above_them() -> None:
    imports = _imports()
    for noun in NOUNS:
        assert imports[noun] <= set(NOUNS), noun


def test_no_module_below_the_api_reads_settings() -> None:
    """The API builds every client (connection, embedder, registry, configs) from the
    settings once and hands each module below the values it uses."""
    for path in sorted(ENGINE.rglob("*.py")):
        module = _module_path(path)
        if any(module.startswith(m) if m.endswith("/") else module == m for m in READS_SETTINGS):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
        names |= {a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) for a in n.names}
        assert not names & {"Settings", "load_settings"}, module


def test_no_import_circle() -> None:
    """Tarjan over the import graph: every strongly connected component is one module."""
    graph = {m: imported - {"neo4j"} for m, imported in _imports().items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    circles: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        for other in graph.get(module, ()):
            if other not in index:
                visit(other)
                low[module] = min(low[module], low[other])
            elif other in stack:
                low[module] = min(low[module], index[other])
        if low[module] == index[module]:
            component = []
            while True:
                top = stack.pop()
                component.append(top)
                if top == module:
                    break
            if len(component) > 1:
                circles.append(sorted(component))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    assert circles == []


# ---- short functions -------------------------------------------------------------------------
MAX_COMPLEXITY = 15
MAX_LINES = 60


def _blocks(blocks: list[Any]) -> Iterator[Any]:
    """radon's functions, with the methods of classes and the closures inside both."""
    for block in blocks:
        if hasattr(block, "methods"):
            yield from _blocks([*block.methods, *block.inner_classes])
        else:
            yield block
            yield from _blocks(block.closures)


def test_no_function_is_over_complexity_15_or_60_lines() -> None:
    """STYLE: short functions a reader need not scroll (radon's cyclomatic complexity)."""
    from radon.complexity import cc_visit

    too_complex, too_long = [], []
    for path in sorted(ENGINE.rglob("*.py")):
        source = path.read_text(encoding="utf-8")
        where = _module_path(path)
        for block in _blocks(cc_visit(source)):
            if block.complexity > MAX_COMPLEXITY:
                too_complex.append(f"{where}:{block.lineno} {block.name} ({block.complexity})")
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                lines = (node.end_lineno or node.lineno) - node.lineno + 1
                if lines > MAX_LINES:
                    too_long.append(f"{where}:{node.lineno} {node.name} ({lines} lines)")
    assert too_complex == []
    assert too_long == []
