// The serving read: live artifacts only. Withdrawn, staged, superseded and removed
// versions are never returned, whatever the filters.
// mode: read
// params: $ns, $kind, $text, $limit
MATCH (a:Live:Artifact {ns: $ns})
WHERE ($kind IS NULL OR a.kind = $kind)
  AND ($text IS NULL OR toLower(a.content) CONTAINS toLower($text))
RETURN a {.*, created_at: null, published_at: null, embedding: null} AS artifact, 'Live' AS visibility
ORDER BY a.uid
LIMIT $limit
