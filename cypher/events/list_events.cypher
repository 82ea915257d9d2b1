// Events of a namespace, newest first.
// mode: read
// params: $ns, $limit
MATCH (e:RepairEvent {ns: $ns})
RETURN e {.*, created_at: toString(e.created_at)} AS event
ORDER BY e.created_at DESC
LIMIT $limit
