// Events that have not completed: what `memorepair resume` picks up after a crash.
// mode: read
// params: $ns
MATCH (e:RepairEvent {ns: $ns})
WHERE NOT e.status IN ['completed', 'failed']
RETURN e.id AS id, e.phase AS phase, e.status AS status, e.by AS by
ORDER BY e.created_at
