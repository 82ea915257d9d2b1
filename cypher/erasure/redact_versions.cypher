// Redact versions to a marker: the text (and its embedding and search terms) is gone;
// uid, version, kind and lineage stay, with which event erased it, when, and a hash of
// what was erased (the first erasure's, if a resumed or later event redacts it again).
// Never a served version. The current versions of the event's roots are locked first,
// as a late writer deriving from them locks them first (`recording`): the two wait for
// each other there, holding nothing else, rather than deadlock further on.
// mode: write
// params: $event_key, $root_keys, $rows
CALL () {
  UNWIND $root_keys AS k
  MATCH (h:Head {key: k})
  SET h._lock = true
  REMOVE h._lock
}
UNWIND $rows AS row
MATCH (a:Artifact {vid: row.vid})
WHERE NOT a:Live
SET a.content = null, a.meta = row.meta, a.recipe = row.recipe, a.validation = null,
    a.embedding = null, a.meta_terms = null,
    a.erased_by = coalesce(a.erased_by, $event_key),
    a.erased_sha256 = coalesce(a.erased_sha256, row.sha256),
    a.erased_at = coalesce(a.erased_at, datetime())
RETURN count(a) AS redacted
