// The roots' holder record and WITHDREW edges, in the barrier transaction (after the
// withdrawal, which checked their previous holder): roots get no candidate, so their
// edges are not written with the candidate facts like the rest of the cascade's.
// mode: write
// params: $event_key, $keys
MATCH (e:RepairEvent {key: $event_key})
UNWIND $keys AS k
MATCH (d:Head {key: k})
WHERE NOT d:Live
SET d:Withdrawn, d.held_by = $event_key
MERGE (e)-[w:WITHDREW]->(d)
ON CREATE SET w.at = datetime(), w.root = true
RETURN count(w) AS linked
