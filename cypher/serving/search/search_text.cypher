// Full-text search: Lucene ranks (BM25) the current versions that match $lucene, whose
// zero-boosted clauses already keep only the namespace, kinds and meta terms asked, so
// the ranking is that of the filtered set; `$fetch` bounds it. Then only the served ones
// (`Live`) that pass the exact filters, best first: the caller widens `$fetch` until
// `$k` pass or Lucene has nothing more (`returned` < `$fetch`).
// The full-text index is eventually consistent: the caller first awaits its pending
// updates (serving/search/await_text_index) when its process has written since it last did.
// mode: read
// params: $ns, $lucene, $fetch, $k, $kinds, $meta, $since, $until, $prefix
CALL db.index.fulltext.queryNodes('artifact_search', $lucene, {limit: $fetch})
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
RETURN size(found) AS returned, hits
