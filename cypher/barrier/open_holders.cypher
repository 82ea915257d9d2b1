// Which of the given events are still open: a cascade they hold is busy.
// mode: read
// params: $keys
UNWIND $keys AS k
MATCH (e:RepairEvent {key: k})
WHERE NOT e.status IN ['completed', 'failed']
RETURN e.key AS key, e.id AS id, e.status AS status
