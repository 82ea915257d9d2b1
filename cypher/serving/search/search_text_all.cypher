// Full-text search, the exhaustive fallback: every current version matching $lucene (no
// bound), then the served ones that pass the exact filters, best first.
// The full-text index is eventually consistent: the caller first awaits its pending
// updates (serving/search/await_text_index) when its process has written since it last did.
// mode: read
// params: $ns, $lucene, $k, $kinds, $meta, $since, $until, $prefix
CALL db.index.fulltext.queryNodes('artifact_search', $lucene) YIELD node AS a, score
WITH a, score
WHERE a:Live AND a.ns = $ns
  AND ($kinds IS NULL OR a.kind IN $kinds)
  AND all(term IN $meta WHERE term IN coalesce(a.meta_terms, []))
  AND ($prefix IS NULL OR a.uid STARTS WITH $prefix)
  AND ($since IS NULL OR coalesce(a.published_at, a.created_at) >= $since)
  AND ($until IS NULL OR coalesce(a.published_at, a.created_at) < $until)
WITH a, score
ORDER BY score DESC, a.uid
LIMIT $k
RETURN -1 AS returned,
       collect({uid: a.uid, version: a.version, kind: a.kind, score: score,
                content: a.content}) AS hits
