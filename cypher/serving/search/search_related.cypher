// One hop over RELATED (semantic edges, retrieval only) from the hits to their served
// neighbours in the namespace that pass the same filters.
// mode: read
// params: $keys, $ns, $kinds, $meta, $since, $until, $prefix
UNWIND $keys AS key
MATCH (hit:Head {key: key})-[:RELATED]-(a:Live)
WHERE hit:Live AND a.ns = $ns
  AND ($kinds IS NULL OR a.kind IN $kinds)
  AND all(term IN $meta WHERE term IN coalesce(a.meta_terms, []))
  AND ($prefix IS NULL OR a.uid STARTS WITH $prefix)
  AND ($since IS NULL OR coalesce(a.published_at, a.created_at) >= $since)
  AND ($until IS NULL OR coalesce(a.published_at, a.created_at) < $until)
RETURN hit.uid AS related_to, a.uid AS uid, a.version AS version, a.kind AS kind,
       a.content AS content
