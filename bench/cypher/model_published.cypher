// Identity model (bench only, replaying an engine event): the event's PUBLISHED edges to
// the successors it republished (unchanged from today's model).
// mode: write
// params: $key, $vids
MATCH (e:RepairEvent {key: $key})
UNWIND $vids AS v
MATCH (s:Artifact {vid: v})
CREATE (e)-[:PUBLISHED]->(s)
RETURN count(s) AS edges
