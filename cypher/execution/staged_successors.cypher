// What a previous (crashed) run of this event already staged and validated.
// mode: read
// params: $event_key
MATCH (e:RepairEvent {key: $event_key})-[:STAGED]->(new:Staged)-[:SUPERSEDES]->(old)
RETURN old.vid AS old_vid, new {.*, created_at: null} AS artifact
