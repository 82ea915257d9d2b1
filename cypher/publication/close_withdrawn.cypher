// Everything not republished stays invisible with its reason recorded: withdrawn
// (unselected, failed, blocked) or removed (deleted roots, descendants with mode remove).
// (Deleted roots lose their text in the erasure step that follows: erasure.py.)
// mode: write
// params: $event_key, $rows
MATCH (e:RepairEvent {key: $event_key})
UNWIND $rows AS row
MATCH (e)-[w:WITHDREW]->(d:Artifact {vid: row.vid})
SET w.outcome = row.outcome, w.detail = row.detail
FOREACH (_ IN CASE WHEN row.remove THEN [1] ELSE [] END |
  REMOVE d:Withdrawn, d:Live
  SET d:Removed, d.removed_at = datetime())
RETURN count(d) AS closed
