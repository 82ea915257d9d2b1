// Identity model (bench only, replaying an engine event): what is not republished stays
// out of serving, as today: Removed (deleted roots, content erased; removed descendants)
// or Withdrawn and held by the event. Rows {vid, removed, erase}.
// mode: write
// params: $key, $rows
UNWIND $rows AS row
MATCH (d:Artifact {vid: row.vid})
FOREACH (_ IN CASE WHEN row.removed THEN [1] ELSE [] END |
  REMOVE d:Withdrawn, d:Live
  SET d:Removed)
FOREACH (_ IN CASE WHEN row.removed THEN [] ELSE [1] END |
  SET d:Withdrawn, d.held_by = $key)
FOREACH (_ IN CASE WHEN row.erase THEN [1] ELSE [] END |
  SET d.content = null)
RETURN count(d) AS closed
