// Vector search, exact path for selective filters: the versions that can pass the
// filters are found through the full-text index's filter fields ($filter: ns, kind and
// meta terms, zero-boosted), at most `$cap` of them; when fewer than `$cap` come back the
// set is complete, and each served one that passes the exact filters is scored exactly
// (`vector.similarity.cosine`). When `returned` reaches `$cap` nothing is scored and the
// caller takes the index path instead.
// The full-text index is eventually consistent: the caller first awaits its pending
// updates (serving/search/await_text_index) when its process has written since it last did.
// mode: read
// params: $ns, $filter, $cap, $vector, $model, $k, $kinds, $meta, $since, $until, $prefix
CALL db.index.fulltext.queryNodes('artifact_search', $filter, {limit: $cap}) YIELD node
WITH collect(node) AS found
CALL (found) {
  UNWIND CASE WHEN size(found) < $cap THEN found ELSE [] END AS a
  WITH a
  WHERE a:Live AND a.ns = $ns AND a.embedding_model = $model
    AND ($kinds IS NULL OR a.kind IN $kinds)
    AND all(term IN $meta WHERE term IN coalesce(a.meta_terms, []))
    AND ($prefix IS NULL OR a.uid STARTS WITH $prefix)
    AND ($since IS NULL OR coalesce(a.published_at, a.created_at) >= $since)
    AND ($until IS NULL OR coalesce(a.published_at, a.created_at) < $until)
  WITH a, vector.similarity.cosine(a.embedding, $vector) AS score
  ORDER BY score DESC, a.uid
  LIMIT $k
  RETURN collect({uid: a.uid, version: a.version, kind: a.kind, score: score,
                  content: a.content}) AS hits
}
OPTIONAL MATCH (s:EmbeddingSpace {ns: $ns})
RETURN size(found) AS returned, hits, s.model AS model, s.dimension AS dimension,
       s.state AS state
