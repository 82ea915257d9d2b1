// Write floor (bench only): the new versions' influence edges from the current versions
// of their inputs (written after the batch's successors, in topological batches).
// Rows: {key, keys: [input key, ...]}; `key` finds the new version, now the Head.
// mode: write
// params: $rows
UNWIND $rows AS row
MATCH (new:Head {key: row.key})
UNWIND range(0, size(row.keys) - 1) AS pos
MATCH (i:Head {key: row.keys[pos]})
CREATE (i)-[:INFLUENCES {pos: pos}]->(new)
RETURN count(*) AS edges
