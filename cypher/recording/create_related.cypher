// Semantic edges: retrieval only, never part of a cascade.
// mode: write
// params: $rows
UNWIND $rows AS row
MATCH (a:Head {key: row.src}), (b:Head {key: row.dst})
MERGE (a)-[:RELATED]->(b)
