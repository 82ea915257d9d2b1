// The hold step's last write: the event's holder record is complete (`held_at`).
// mode: write
// params: $event_key
MATCH (e:RepairEvent {key: $event_key})
SET e.held_at = coalesce(e.held_at, datetime())
RETURN e.held_at AS held_at
