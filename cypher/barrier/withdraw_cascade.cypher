// The barrier: take all of C(F) out of serving (the reach of candidates/plan_cascade)
// in one statement of the one barrier transaction, so the cascade never travels to the
// client. It writes only what stops serving: `Live` is removed. The `Withdrawn` label
// and `held_by` follow in the hold step (barrier/hold_cascade.cypher), the WITHDREW audit
// edges with the candidate facts (events/record_candidates): on large cascades each of
// those writes cost more than this one. Nodes an earlier event left withdrawn (few) are
// marked held at once, the roots by barrier/link_roots.cypher. `held_by` is read only
// where `Live` was not: reading it on every node cost as much as the label change.
// Returns the other events holding any of it, which the caller checks for being still
// open (then the whole transaction is refused), and, on the $first round, how many of
// its nodes were already out of serving with no holder recorded: another event's, whose
// hold step has not committed yet (also refused). Safe to run twice.
// mode: write
// params: $event_key, $keys, $first
MATCH (e:RepairEvent {key: $event_key})
SET e.withdrawn_at = datetime()
WITH e
MATCH (r:Head)-[:INFLUENCES*0..]->(d)
WHERE r.key IN $keys
WITH DISTINCT d
WHERE d:Head AND NOT d:Removed
WITH d, d:Live AS was_live
FOREACH (_ IN CASE WHEN was_live THEN [1] ELSE [] END | REMOVE d:Live)
WITH d, was_live, CASE WHEN was_live THEN null ELSE d.held_by END AS previous
FOREACH (_ IN CASE WHEN previous IS NULL THEN [] ELSE [1] END |
  SET d:Withdrawn, d.held_by = $event_key)
RETURN count(*) AS withdrawn,
       collect(DISTINCT CASE WHEN previous <> $event_key THEN previous END) AS holders,
       sum(CASE WHEN $first AND NOT was_live AND previous IS NULL THEN 1 ELSE 0 END)
         AS unrecorded
