// Vector search, the exhaustive fallback: every served version of the namespace (of the
// kinds asked, through the ns/kind index) that passes the filters, scored exactly. Used
// when the index path could not find `$k` served hits in its bounded widening rounds,
// so the answer is complete even when almost nothing passes.
// mode: read
// params: $ns, $vector, $model, $k, $kinds, $meta, $since, $until, $prefix
MATCH (a:Artifact {ns: $ns})
WHERE a:Live AND a.embedding_model = $model
  AND ($kinds IS NULL OR a.kind IN $kinds)
  AND all(term IN $meta WHERE term IN coalesce(a.meta_terms, []))
  AND ($prefix IS NULL OR a.uid STARTS WITH $prefix)
  AND ($since IS NULL OR coalesce(a.published_at, a.created_at) >= $since)
  AND ($until IS NULL OR coalesce(a.published_at, a.created_at) < $until)
WITH a, vector.similarity.cosine(a.embedding, $vector) AS score
ORDER BY score DESC, a.uid
LIMIT $k
WITH collect({uid: a.uid, version: a.version, kind: a.kind, score: score,
              content: a.content}) AS hits
OPTIONAL MATCH (s:EmbeddingSpace {ns: $ns})
RETURN -1 AS returned, hits, s.model AS model, s.dimension AS dimension, s.state AS state
