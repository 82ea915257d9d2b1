"""Settings, the Cypher loader and the sample files: checks that need no database."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from tests.unit.allow_list import LABELS, REL_TYPES

from memorepair import queries, sample
from memorepair.errors import ConfigError, MemoRepairError
from memorepair.model import Artifact
from memorepair.sample.build import build
from memorepair.settings import load_settings


def test_every_query_file_parses_with_declared_parameters() -> None:
    names = queries.all_names()
    assert len(names) > 30
    for name in names:
        q = queries.load(name)
        assert q.text and q.mode in ("read", "write")


def test_queries_use_only_allow_listed_labels_and_types() -> None:
    for name in queries.all_names():
        text = re.sub(r"'[^']*'", "''", queries.load(name).text)  # ignore string literals
        labels = set(re.findall(r"[(:]\s*\w*:(\w+)", text)) | set(re.findall(r"\w+:(\w+)\)", text))
        labels |= set(re.findall(r"(?:SET|REMOVE)\s+\w+:(\w+)", text))
        types = set(re.findall(r"\[\w*:(\w+)", text))
        assert types <= REL_TYPES, (name, types - REL_TYPES)
        assert labels <= LABELS, (name, labels - LABELS)


def test_no_query_projects_every_property_of_an_artifact() -> None:
    """`a {.*}` reads every property, a version's embedding (hundreds of floats) included,
    even when the projection then sets `embedding: null`: reads of artifacts name the
    properties they return. Events and imports (no embedding) may use `.*`."""
    for name in queries.all_names():
        text = queries.load(name).text
        for var in re.findall(r"(\w+)\s*\{\s*\.\*", text):
            bound = set(re.findall(rf"\({var}:(\w+)", text))
            assert bound and bound <= {"RepairEvent", "Import"}, (name, var, bound)


def test_every_named_projection_of_an_artifact_holds_what_the_model_reads() -> None:
    """The reads that name an artifact's properties (rather than `.*`) each list them
    again: every one must hold every field `codec.artifact_from_row` fills."""
    wanted = set(Artifact.model_fields) - {"visibility"}
    found = 0
    for name in queries.all_names():
        text = queries.load(name).text
        for fields in re.findall(r"\{(\.uid,[^}]*)\}", text):
            found += 1
            named = {f.strip().lstrip(".") for f in fields.split(",")}
            if name == "serving/retrieve/export_live":  # its caller supplies the namespace
                named.add("ns")
            assert wanted <= named, (name, wanted - named)
    assert found >= 9


def test_loader_refuses_undeclared_or_unused_parameters() -> None:
    with pytest.raises(MemoRepairError, match="declares"):
        queries.parse("x", "// mode: read\n// params: $a\nRETURN $b", "cypher/x.cypher")
    with pytest.raises(MemoRepairError, match="mode"):
        queries.parse("x", "// params:\nRETURN 1", "cypher/x.cypher")
    q = queries.parse("x", "// mode: read\n// params: $a\nRETURN $a", "cypher/x.cypher")
    with pytest.raises(MemoRepairError, match=r"missing parameters \['a'\], unexpected \['b'\]"):
        q.params({"b": 1})


def test_bad_settings_name_the_field(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NEO4J_URI", "http://localhost:7474")
    with pytest.raises(ConfigError, match="NEO4J_URI: must start with"):
        load_settings()
    monkeypatch.setenv("NEO4J_URI", "neo4j+s://abc.databases.neo4j.io")
    assert load_settings().neo4j_uri == "neo4j+s://abc.databases.neo4j.io"
    monkeypatch.setenv("MEMOREPAIR_BOLT_PORT", "80")
    with pytest.raises(ConfigError, match="MEMOREPAIR_BOLT_PORT"):
        load_settings()
    monkeypatch.delenv("MEMOREPAIR_BOLT_PORT")
    monkeypatch.setenv("MEMOREPAIR_LAMBDA", "-2")
    with pytest.raises(ConfigError, match="MEMOREPAIR_LAMBDA"):
        load_settings()
    monkeypatch.delenv("MEMOREPAIR_LAMBDA")
    monkeypatch.setenv("MEMOREPAIR_COSTS", '{"skill.quantum": 1}')
    with pytest.raises(ConfigError, match=r"skill\.quantum"):
        load_settings()
    monkeypatch.delenv("MEMOREPAIR_COSTS")
    monkeypatch.setenv("MEMOREPAIR_COST_PER_SECOND", "2")  # removed: refused, not ignored
    with pytest.raises(ConfigError, match="MEMOREPAIR_COST_PER_SECOND was removed"):
        load_settings()


def test_sample_files_are_what_the_builder_makes(tmp_path: Path) -> None:
    from memorepair.sample.build import write

    write(tmp_path)
    for name in ("memory.jsonl", *sample.EVENTS):
        assert (tmp_path / name).read_text() == sample.path(name).read_text(), name
    kinds = {(a.kind.value, a.arch.value if a.arch else None) for a in build()}
    assert {
        ("skill", "neural"),
        ("skill", "prompt"),
        ("skill", "chain"),
        ("cache", None),
        ("summary", None),
        ("record", None),
    } <= kinds
    event = json.loads(sample.path("event-migrate.json").read_text())
    assert event["type"] == "migrate" and event["interface"]["renames"]


def test_every_query_file_is_named_by_a_module_and_every_name_has_a_file() -> None:
    """Both ways: no dead `.cypher` file, no constant without its file (import fails)."""
    import importlib
    import pkgutil

    import memorepair

    for module in pkgutil.walk_packages(memorepair.__path__, "memorepair."):
        importlib.import_module(module.name)
    named = {q.source for q in queries.named_queries().values() if q.source.startswith("cypher/")}
    on_disk = {f"cypher/{name}.cypher" for name in queries.all_names()}
    assert sorted(on_disk - named) == [], "query files no module names (dead)"
    assert sorted(named - on_disk) == []
    with pytest.raises(MemoRepairError, match=r"no query file cypher/nope/missing\.cypher"):
        queries.named("nope/missing")
