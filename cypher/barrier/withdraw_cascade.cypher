// The barrier: withdraw all of C(F) (the same reach as reach_cascade.cypher) and mark
// every node as held by the event, in one statement of the one barrier transaction, so
// the cascade never travels to the client. Returns the other events that held any of
// it, which the caller checks for being still open (then the whole transaction is
// refused). Only what stops serving is written here: the label swap and `held_by`.
// The WITHDREW audit edges are written with the candidate facts
// (events/record_candidates), before any successor is built; creating them here more
// than doubled the barrier on large cascades. Safe to run twice.
// mode: write
// params: $event_key, $keys
MATCH (e:RepairEvent {key: $event_key})
SET e.withdrawn_at = datetime()
WITH e
MATCH (r:Head)-[:INFLUENCES*0..]->(d)
WHERE r.key IN $keys
WITH DISTINCT d
WHERE d:Head AND NOT d:Removed
WITH d, d.held_by AS previous, d:Withdrawn AS was_withdrawn
REMOVE d:Live
SET d:Withdrawn, d.held_by = $event_key
WITH CASE WHEN was_withdrawn AND previous <> $event_key THEN previous END AS holder
RETURN count(*) AS withdrawn, collect(DISTINCT holder) AS holders
