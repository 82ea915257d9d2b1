// The barrier: withdraw all of C(F) (the same reach as reach_cascade.cypher) and link
// every node to the event, in one statement of the one barrier transaction, so the
// cascade never travels to the client. Returns the other events that held any of it,
// which the caller checks for being still open (then the whole transaction is refused).
// Safe to run twice: a node already held by this event keeps its WITHDREW edge (it was
// created with the hold, here or by a late arrival), so only newly held nodes get one.
// mode: write
// params: $event_key, $keys
MATCH (r:Head)-[:INFLUENCES*0..]->(d)
WHERE r.key IN $keys
WITH DISTINCT d
WHERE d:Head AND NOT d:Removed
WITH d, d.held_by AS previous, d:Withdrawn AS was_withdrawn
REMOVE d:Live
SET d:Withdrawn, d.held_by = $event_key
WITH d, CASE WHEN was_withdrawn AND previous <> $event_key THEN previous END AS holder,
     coalesce(previous, '') <> $event_key AS newly_held
CALL (d, newly_held) {
  WITH d WHERE newly_held
  MATCH (e:RepairEvent {key: $event_key})
  CREATE (e)-[:WITHDREW {at: datetime(), root: d.key IN $keys}]->(d)
}
RETURN count(d) AS withdrawn, collect(DISTINCT holder) AS holders
