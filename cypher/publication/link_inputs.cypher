// A published successor's influence edges come from the inputs it actually used, so the
// next event sees complete provenance.
// mode: write
// params: $rows
UNWIND $rows AS row
MATCH (new:Artifact {vid: row.vid})
UNWIND range(0, size(row.input_keys) - 1) AS pos
MATCH (i:Live {key: row.input_keys[pos]})
MERGE (i)-[r:INFLUENCES]->(new)
ON CREATE SET r.pos = pos
RETURN count(r) AS edges
