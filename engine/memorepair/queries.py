"""Loads the named Cypher files under `cypher/` and checks their declared parameters.

Every statement the engine runs is a file, `cypher/<module>/<verb>_<object>.cypher`, in the
folder of the one module that runs it (`cypher/serving/search/` for `serving/search.py`; a
query two modules run belongs to the lower one, whose constant the other imports), so that
auditors can read and paste exactly what runs. Each file starts with header comments:

    // mode: read|write
    // params: $uids, $ns

A step module names the files it runs as module-level constants,

    WITHDRAW_CASCADE = queries.named("barrier/withdraw_cascade")

so a misspelt file fails when the module is imported, jump-to-definition leads from a call
to its query, and `named_queries()` lets a test check both ways that every file is used.
The loader refuses a file whose body uses a parameter it does not declare (or declares one
it does not use), and `Query.params()` refuses a call that passes a different set, so a
typo fails at load or at the call site, not as a silent null in Neo4j. Query text is never
built from input: values travel only as parameters.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from memorepair.errors import MemoRepairError

_PARAM = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)")
_HEADER = re.compile(r"^//\s*(mode|params):\s*(.*)$")


@dataclass(frozen=True)
class Query:
    name: str
    text: str
    mode: Literal["read", "write"]
    declared: frozenset[str]
    source: str

    def params(self, values: Mapping[str, Any]) -> dict[str, Any]:
        """The parameter map for one call, checked against the file's declaration."""
        given = set(values)
        if given != self.declared:
            missing = sorted(self.declared - given)
            extra = sorted(given - self.declared)
            raise MemoRepairError(
                f"query {self.name}: missing parameters {missing}, unexpected {extra}"
            )
        return dict(values)


def _cypher_root() -> Path:
    """`memorepair/cypher` inside an installed wheel, else the checkout's `cypher/`."""
    packaged = resources.files("memorepair") / "cypher"
    if packaged.is_dir():
        return Path(str(packaged))
    checkout = Path(__file__).resolve().parents[2] / "cypher"
    if checkout.is_dir():
        return checkout
    raise MemoRepairError("the cypher/ query folder is missing from this installation")


def parse(name: str, raw: str, source: str) -> Query:
    mode: str | None = None
    declared: set[str] = set()
    body: list[str] = []
    for line in raw.splitlines():
        header = _HEADER.match(line.strip())
        if header:
            key, value = header.groups()
            if key == "mode":
                mode = value.strip()
            else:
                declared.update(p for p in _PARAM.findall(value))
            continue
        if line.strip().startswith("//"):
            continue
        body.append(line)
    text = "\n".join(body).strip()
    if mode not in ("read", "write"):
        raise MemoRepairError(f"{source}:1: header '// mode: read|write' is missing")
    used = set(_PARAM.findall(text))
    if used != declared:
        raise MemoRepairError(
            f"{source}: '// params:' declares {sorted(declared)} but the body uses {sorted(used)}"
        )
    return Query(name, text, mode, frozenset(declared), source)  # type: ignore[arg-type]


#: Every query a module named at import, by source path (see `named_queries`).
_NAMED: dict[str, Query] = {}


@cache
def load(name: str) -> Query:
    """Load `cypher/<name>.cypher`, e.g. `load("barrier/withdraw_cascade")`."""
    return _load_file(_cypher_root(), name, "cypher")


def named(name: str, *, root: Path | None = None, label: str = "cypher") -> Query:
    """A module's query constant: `cypher/<name>.cypher`, parsed now (fails at import).

    `root`/`label` point at another folder of query files: the benchmarks keep theirs
    outside the engine (`bench/cypher/`).
    """
    query = load(name) if root is None else _load_file(root, name, label)
    _NAMED[query.source] = query
    return query


def named_queries() -> dict[str, Query]:
    """Every query named so far, by source path (`cypher/<name>.cypher`)."""
    return dict(_NAMED)


def _load_file(root: Path, name: str, label: str) -> Query:
    path = root / f"{name}.cypher"
    if not path.is_file():
        raise MemoRepairError(f"no query file {label}/{name}.cypher")
    return parse(name, path.read_text(encoding="utf-8"), f"{label}/{name}.cypher")


def all_names() -> list[str]:
    root = _cypher_root()
    return sorted(str(p.relative_to(root).with_suffix("")) for p in root.rglob("*.cypher"))
