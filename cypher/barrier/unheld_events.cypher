// Open events of namespace $ns between their barrier and their hold step: their withdrawn
// nodes name no holder yet. For the message when a barrier reaches such nodes (which
// never names another namespace's events).
// mode: read
// params: $event_key, $ns
MATCH (e:RepairEvent {ns: $ns})
WHERE e.withdrawn_at IS NOT NULL AND e.held_at IS NULL AND e.key <> $event_key
  AND NOT e.status IN ['completed', 'failed']
RETURN e.key AS key, e.id AS id, e.status AS status
