// The barrier of a retry: take over the versions an earlier, completed event left
// withdrawn as failed, blocked or input_withdrawn (and still holds), so they are
// repaired again under this event. They are not served already; this records the new
// holder. Returns how many were taken.
// mode: write
// params: $event_key, $of
MATCH (e:RepairEvent {key: $event_key})
SET e.withdrawn_at = datetime()
WITH e
MATCH (:RepairEvent {key: $of})-[w:WITHDREW]->(d:Head)
WHERE w.outcome IN ['failed', 'blocked', 'input_withdrawn'] AND d.held_by = $of
  AND NOT d:Live AND NOT d:Removed
SET d:Withdrawn, d.held_by = $event_key
RETURN count(d) AS withdrawn
