// The barrier's fixpoint check, run after withdrawing (its locks now held): how many
// nodes of C(F) are still served, or held by another event (a holder the next round
// checks). `Live` and `Withdrawn` are only ever on current, not removed versions, so no
// other label is read. A writer that derived from a cascade node before the barrier
// locked it has committed by now, and shows up here.
// mode: read
// params: $event_key, $keys
MATCH (r:Head)-[:INFLUENCES*0..]->(d)
WHERE r.key IN $keys
WITH DISTINCT d
WHERE d:Live OR (d:Withdrawn AND d.held_by <> $event_key)
RETURN count(d) AS unwithdrawn
