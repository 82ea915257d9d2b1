// The exact full-text ranking of the served set for the benchmark's recall: every
// version Lucene matches (no bound), then the served ones of the namespace with the meta
// terms asked, best first. The engine's widening must agree with it.
// mode: read
// params: $ns, $lucene, $meta, $k
CALL db.index.fulltext.queryNodes('artifact_search', $lucene) YIELD node AS a, score
WITH a, score
WHERE a:Live AND a.ns = $ns AND all(term IN $meta WHERE term IN coalesce(a.meta_terms, []))
WITH a, score
ORDER BY score DESC, a.uid
LIMIT $k
RETURN collect({uid: a.uid, version: a.version, kind: a.kind, score: score}) AS hits
