// Identity model (bench only, replaying an engine event): one audit edge per cascade
// version with the outcome the engine recorded for its uid (unchanged from today's model).
// Rows {vid, outcome, root}.
// mode: write
// params: $key, $rows
MATCH (e:RepairEvent {key: $key})
UNWIND $rows AS row
MATCH (d:Artifact {vid: row.vid})
CREATE (e)-[:WITHDREW {outcome: row.outcome, root: row.root}]->(d)
RETURN count(d) AS edges
