// Hybrid search's first round in one statement: the vector index path's first fetch
// (serving/search/search_vector_index: the index's `$fetch` nearest of any namespace, then
// the served ones that pass the filters, best first) and the full-text path's
// (serving/search/search_text: Lucene's `$text_fetch` best within the filters, then the
// served ones), each `$k` deep. One round trip instead of two concurrent ones: on two busy
// cores the threads and the second connection cost more than running the two index
// queries one after the other in the server (bench.search). Each ranking that fell short
// is widened by its own query afterwards, as in the single modes; `returned` /
// `text_returned` say how many each index answered. While `reindex --compact` rebuilds
// the vector index it is not asked (`rebuilding`).
// The full-text index is eventually consistent: the caller first awaits its pending
// updates (serving/search/await_text_index) when its process has written since it last did.
// mode: read
// params: $ns, $vector, $model, $fetch, $lucene, $text_fetch, $k, $kinds, $meta, $since, $until, $prefix
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
WITH found AS vfound, hits AS vhits, rebuilding
CALL () {
  CALL db.index.fulltext.queryNodes('artifact_search', $lucene, {limit: $text_fetch})
    YIELD node, score
  WITH collect([node, score]) AS found
  CALL (found) {
    UNWIND found AS pair
    WITH pair[0] AS a, pair[1] AS score
    WHERE a:Live AND a.ns = $ns
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
  RETURN size(found) AS text_returned, hits AS text_hits
}
OPTIONAL MATCH (s:EmbeddingSpace {ns: $ns})
RETURN size(vfound) AS returned, vhits AS hits, s.model AS model, s.dimension AS dimension,
       s.state AS state, rebuilding, text_returned, text_hits