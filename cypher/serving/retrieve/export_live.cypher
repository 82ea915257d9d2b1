// The served memory of a namespace, each artifact with its inputs in recorded order and
// the served artifacts it is RELATED to (each pair once, from the smaller uid).
// mode: read
// params: $ns
MATCH (a:Live:Artifact {ns: $ns})
OPTIONAL MATCH (a)-[:RELATED]-(b:Live)
WHERE a.uid < b.uid
RETURN a {.uid, .version, .kind, .arch, .content, .value, .repair_cost, .recipe, .meta,
          .inputs} AS artifact, collect(b.uid) AS related
ORDER BY artifact.uid
