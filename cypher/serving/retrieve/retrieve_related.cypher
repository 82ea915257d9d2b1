// Live artifacts joined to a live artifact by a semantic edge (retrieval only).
// mode: read
// params: $key, $limit
MATCH (a:Head {key: $key})-[:RELATED]-(b:Live)
WHERE a:Live
RETURN DISTINCT b {.*, created_at: null, published_at: null, embedding: null} AS artifact,
       'Live' AS visibility
LIMIT $limit
