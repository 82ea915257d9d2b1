// The barrier: withdraw all of C(F) (the same reach as reach_cascade.cypher) and link
// every node to the event, in one statement of the one barrier transaction, so the
// cascade never travels to the client. Returns the other events that held any of it,
// which the caller checks for being still open (then the whole transaction is refused).
// Safe to run twice: a repeated run re-marks the same nodes and merges the same edges.
// mode: write
// params: $event_key, $keys
MATCH (r:Head)-[:INFLUENCES*0..]->(d)
WHERE r.key IN $keys
WITH DISTINCT d
WHERE d:Head AND NOT d:Removed
MATCH (e:RepairEvent {key: $event_key})
WITH e, d, CASE WHEN d:Withdrawn AND d.held_by <> $event_key THEN d.held_by END AS holder
REMOVE d:Live
SET d:Withdrawn, d.held_by = $event_key
MERGE (e)-[w:WITHDREW]->(d)
ON CREATE SET w.at = datetime(), w.root = d.key IN $keys
RETURN count(d) AS withdrawn, collect(DISTINCT holder) AS holders
