"""Artifact versions to and from Neo4j rows (maps and recipes are stored as JSON text)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from memorepair.model import Artifact, Recipe, Visibility


def canonical_json(value: Any) -> str | None:
    """Maps and recipes are stored as canonical JSON strings (Neo4j has no map property)."""
    if value is None or value == {}:
        return None
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def artifact_from_row(row: Mapping[str, Any], visibility: str | None = None) -> Artifact:
    recipe = row.get("recipe")
    meta = row.get("meta")
    return Artifact(
        uid=row["uid"],
        version=row["version"],
        ns=row["ns"],
        kind=row["kind"],
        arch=row.get("arch"),
        content=row.get("content") or "",
        value=row.get("value"),
        repair_cost=row.get("repair_cost"),
        recipe=Recipe.model_validate(json.loads(recipe)) if recipe else None,
        meta=json.loads(meta) if meta else {},
        visibility=Visibility(visibility or row.get("visibility") or "Live"),
        inputs=list(row.get("inputs") or []),
    )
