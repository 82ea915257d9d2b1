// One event's record (phase, status, figures).
// mode: read
// params: $key
MATCH (e:RepairEvent {key: $key})
RETURN e {.*, created_at: toString(e.created_at)} AS event
