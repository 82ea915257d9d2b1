// The barrier: withdraw every node of C(F) and link it to the event. Run inside the one
// barrier transaction; safe to run twice (the driver may retry a transaction function).
// mode: write
// params: $event_key, $keys, $roots
MATCH (e:RepairEvent {key: $event_key})
UNWIND $keys AS k
MATCH (d:Head {key: k})
REMOVE d:Live
SET d:Withdrawn, d.held_by = $event_key
MERGE (e)-[w:WITHDREW]->(d)
ON CREATE SET w.at = datetime(), w.root = k IN $roots
RETURN count(d) AS withdrawn
