// Served versions of the namespace whose uid starts with $prefix, most recently published
// first, a page at a time ($skip, $limit): the LangGraph store's search without a query,
// whose value filters are applied to each page until enough pass.
// mode: read
// params: $ns, $prefix, $skip, $limit
MATCH (a:Live:Artifact {ns: $ns})
WHERE a.uid STARTS WITH $prefix
WITH a, coalesce(a.published_at, a.created_at) AS updated_at
ORDER BY updated_at DESC, a.uid
SKIP $skip
LIMIT $limit
OPTIONAL MATCH (first:Artifact {key: a.key, version: 1})
RETURN a {.uid, .version, .ns, .kind, .arch, .content, .value, .repair_cost,
          .recipe, .meta, .inputs} AS artifact,
       coalesce(first.created_at, a.created_at) AS created_at, updated_at
