// The served version of each uid asked (nothing for a uid with none), with when the uid
// was first recorded and when its served version was published (adapters that show item
// times: the LangGraph store's `created_at` / `updated_at`).
// mode: read
// params: $keys
UNWIND $keys AS key
MATCH (a:Head {key: key})
WHERE a:Live
OPTIONAL MATCH (first:Artifact {key: key, version: 1})
RETURN a {.uid, .version, .ns, .kind, .arch, .content, .value, .repair_cost,
          .recipe, .meta, .inputs} AS artifact,
       coalesce(first.created_at, a.created_at) AS created_at,
       coalesce(a.published_at, a.created_at) AS updated_at
