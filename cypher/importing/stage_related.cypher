// Semantic edges of an import, between current versions or versions the import staged
// (retrieval only: serving follows them to Live versions alone).
// mode: write
// params: $key, $rows
UNWIND $rows AS row
MATCH (a:Artifact {key: row.src})
WHERE a:Head OR a.import_key = $key
MATCH (b:Artifact {key: row.dst})
WHERE b:Head OR b.import_key = $key
MERGE (a)-[:RELATED]->(b)
