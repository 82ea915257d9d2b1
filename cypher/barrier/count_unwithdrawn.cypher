// The barrier's fixpoint check, run after withdrawing (its locks now held): how many
// nodes of C(F) are not yet held by this event. A writer that derived from a cascade
// node before the barrier locked it has committed by now, and shows up here.
// mode: read
// params: $event_key, $keys
MATCH (r:Head)-[:INFLUENCES*0..]->(d)
WHERE r.key IN $keys
WITH DISTINCT d
WHERE d:Head AND NOT d:Removed AND coalesce(d.held_by, '') <> $event_key
RETURN count(d) AS unwithdrawn
