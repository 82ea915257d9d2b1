// The no-cascade-repair baseline (selector "none"): withdraw only the roots F.
// mode: write
// params: $event_key, $keys
MATCH (e:RepairEvent {key: $event_key})
UNWIND $keys AS k
MATCH (d:Head {key: k})
WITH e, d, CASE WHEN d:Withdrawn AND d.held_by <> $event_key THEN d.held_by END AS holder
REMOVE d:Live
SET d:Withdrawn, d.held_by = $event_key
MERGE (e)-[w:WITHDREW]->(d)
ON CREATE SET w.at = datetime(), w.root = true
RETURN count(d) AS withdrawn, collect(DISTINCT holder) AS holders
