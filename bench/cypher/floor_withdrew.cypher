// Write floor (bench only): one audit edge per cascade version, from the event.
// mode: write
// params: $key, $vids
MATCH (e:RepairEvent {key: $key})
UNWIND $vids AS v
MATCH (d:Artifact {vid: v})
CREATE (e)-[:WITHDREW {outcome: 'published'}]->(d)
RETURN count(d) AS edges
