// The retries of an event (events with retry_of = its id), oldest first.
// mode: read
// params: $ns, $id
MATCH (e:RepairEvent {ns: $ns})
WHERE e.retry_of = $id
RETURN e.id AS id, e.status AS status, e.phase AS phase
ORDER BY e.created_at
