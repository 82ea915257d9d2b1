// The served memory of a namespace, each artifact with its inputs in recorded order.
// mode: read
// params: $ns
MATCH (a:Live:Artifact {ns: $ns})
OPTIONAL MATCH (a)-[r:RELATED]->(b:Live)
RETURN a {.uid, .version, .kind, .arch, .content, .value, .repair_cost, .recipe, .meta,
          .inputs} AS artifact, collect(b.uid) AS related
ORDER BY a.uid
