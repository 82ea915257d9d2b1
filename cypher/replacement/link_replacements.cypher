// A correction keeps its lineage: influence edges into each root's replacement from the
// versions of its inputs (the served ones, or the replacements of the event's other
// roots), so the next event's cascade reaches the corrected artifact.
// Rows: {vid, input_vids: [vid, ...]} in input order.
// mode: write
// params: $rows
UNWIND $rows AS row
MATCH (new:Artifact {vid: row.vid})
UNWIND range(0, size(row.input_vids) - 1) AS pos
MATCH (i:Artifact {vid: row.input_vids[pos]})
CREATE (i)-[:INFLUENCES {pos: pos}]->(new)
