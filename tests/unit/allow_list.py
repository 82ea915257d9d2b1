"""The fixed allow-list of labels and relationship types (docs/data-model.md): every
query may name only these (tests/unit/test_foundation.py), and a database the suites
have written holds exactly these (tests/integration/test_security.py)."""

from __future__ import annotations

#: The only labels and relationship types any query may name (see docs/data-model.md).
LABELS = {
    "Artifact",
    "Head",
    "Live",
    "Withdrawn",
    "Staged",
    "Superseded",
    "Removed",
    "RepairEvent",
    "EmbeddingSpace",
    "PurgeFiller",  # `neo4j purge`'s transient filler, deleted before it ends
    "Usage",  # use recording: per uid count and decayed frequency (docs/values.md)
    "UsageLog",  # use recording: one per namespace
    "Exposure",  # use recording: who was served which version (audit exposure)
    "Principal",  # access: a principal holding grants
    "Grant",  # access: roles on a namespace pattern
    "WorkStat",  # measured repair seconds per namespace, operator and kind (docs/values.md)
    "IndexRebuild",  # `reindex --compact` rebuilding the vector index: search goes exact
    "Import",  # a batch written staged, published in one transaction (docs/interchange.md)
    "Importing",  # a version of an import not published yet: never Head, never served
    "PublishLock",  # per namespace and stripe: repairs' batch writers and barriers meet on it
}
REL_TYPES = {"INFLUENCES", "RELATED", "SUPERSEDES", "WITHDREW", "STAGED", "PUBLISHED", "HOLDS"}
