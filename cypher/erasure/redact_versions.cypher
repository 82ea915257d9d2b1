// Redact versions to a marker: the text is gone; uid, version, kind and lineage stay, with
// which event erased it, when, and a hash of what was erased (the first erasure's, if a
// resumed or later event redacts it again). Never a served version.
// mode: write
// params: $event_key, $rows
UNWIND $rows AS row
MATCH (a:Artifact {vid: row.vid})
WHERE NOT a:Live
SET a.content = null, a.meta = row.meta, a.recipe = row.recipe, a.validation = null,
    a.erased_by = coalesce(a.erased_by, $event_key),
    a.erased_sha256 = coalesce(a.erased_sha256, row.sha256),
    a.erased_at = coalesce(a.erased_at, datetime())
RETURN count(a) AS redacted
