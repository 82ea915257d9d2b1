// Vector search, index path: the vector index's `$fetch` nearest versions of any
// namespace, then only the served ones (`Live`) that pass the filters, best first. The
// index ranks before it filters, so the caller widens `$fetch` until `$k` hits pass or
// the index has nothing more (`returned` < `$fetch`). Vectors of another model never
// compare (`embedding_model`); the space row lets the caller refuse such a query.
// Filters: $kinds (null: any), $meta (`key=value` terms, all required), $prefix (the
// uid starts with it; null: any), $since/$until
// (the version's publication time, else its creation time; half-open).
// While `reindex --compact` rebuilds the index (an `IndexRebuild` node says so) the index
// is not asked at all (it would block, then fail): `rebuilding` sends the caller to the
// exact path.
// mode: read
// params: $ns, $vector, $model, $fetch, $k, $kinds, $meta, $since, $until, $prefix
OPTIONAL MATCH (rebuild:IndexRebuild {name: 'artifact_embedding'})
WITH rebuild IS NOT NULL AS rebuilding
CALL (rebuilding) {
  WITH rebuilding WHERE NOT rebuilding
  CALL db.index.vector.queryNodes('artifact_embedding', $fetch, $vector) YIELD node, score
  RETURN collect([node, score]) AS found
}
CALL (found) {
  UNWIND found AS pair
  WITH pair[0] AS a, pair[1] AS score
  WHERE a:Live AND a.ns = $ns AND a.embedding_model = $model
    AND ($kinds IS NULL OR a.kind IN $kinds)
    AND all(term IN $meta WHERE term IN coalesce(a.meta_terms, []))
    AND ($prefix IS NULL OR a.uid STARTS WITH $prefix)
    AND ($since IS NULL OR coalesce(a.published_at, a.created_at) >= $since)
    AND ($until IS NULL OR coalesce(a.published_at, a.created_at) < $until)
  WITH a, score
  ORDER BY score DESC, a.uid
  LIMIT $k
  RETURN collect({uid: a.uid, version: a.version, kind: a.kind, score: score,
                  content: a.content}) AS hits
}
OPTIONAL MATCH (s:EmbeddingSpace {ns: $ns})
RETURN size(found) AS returned, hits, s.model AS model, s.dimension AS dimension,
       s.state AS state, rebuilding
