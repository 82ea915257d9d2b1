"""Artifact versions to and from Neo4j rows (maps and recipes are stored as JSON text)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from memorepair.model import Artifact, Recipe, Visibility


def canonical_json(value: Any) -> str:
    """One text per value: sorted keys, no spaces, UTF-8 kept.

    Replay validation compares successors byte for byte and event digests hash this
    text, so nothing here may depend on dict order.
    """
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def stored_json(value: Any) -> str | None:
    """A map or recipe as stored on a node (Neo4j has no map property); empty is null."""
    if value is None or value == {}:
        return None
    return canonical_json(value)


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
