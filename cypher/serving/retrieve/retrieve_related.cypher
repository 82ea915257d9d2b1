// Live artifacts joined to a live artifact by a semantic edge (retrieval only).
// mode: read
// params: $key, $limit
MATCH (a:Head {key: $key})-[:RELATED]-(b:Live)
WHERE a:Live
RETURN DISTINCT b {.uid, .version, .ns, .kind, .arch, .content, .value, .repair_cost,
                   .recipe, .meta, .inputs} AS artifact,
       'Live' AS visibility
LIMIT $limit
