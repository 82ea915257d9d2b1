// The serving read by kind and/or substring: live artifacts only (withdrawn, staged,
// superseded and removed versions are never returned, whatever the filters), in uid
// order. A substring has no index (`search --mode text` is the indexed word search), so
// this is a scan, bounded: the current versions of the namespace are walked in key
// order through the `head_key` index (keys are `ns/uid`), at most `$scan` of them, and
// the walk stops as soon as `$limit` pass. `retrieve_scan_rest` says whether the bound
// cut it short.
// mode: read
// params: $prefix, $kind, $text, $limit, $scan
MATCH (a:Head)
WHERE a.key STARTS WITH $prefix
WITH a
ORDER BY a.key
LIMIT $scan
WITH a
WHERE a:Live
  AND ($kind IS NULL OR a.kind = $kind)
  AND ($text IS NULL OR toLower(a.content) CONTAINS toLower($text))
RETURN a {.uid, .version, .ns, .kind, .arch, .content, .value, .repair_cost,
          .recipe, .meta, .inputs} AS artifact, 'Live' AS visibility
LIMIT $limit
