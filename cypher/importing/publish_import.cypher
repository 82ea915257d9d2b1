// Publish an import's staged versions, all in this one transaction: each becomes the
// current version of its uid, served when its `live` (every input served now), else
// withdrawn and joined to the event holding its support, exactly as a writer's version
// is (`late_arrival`, or `stale_input` when an input it read is no longer current).
// mode: write
// params: $key, $rows
UNWIND $rows AS row
MATCH (a:Artifact:Importing {vid: row.vid})
WHERE a.import_key = $key
REMOVE a:Importing
SET a:Head
FOREACH (_ IN CASE WHEN row.live THEN [1] ELSE [] END | SET a:Live)
FOREACH (_ IN CASE WHEN row.live THEN [] ELSE [1] END |
  SET a:Withdrawn, a.held_by = row.held_by, a.outcome = row.outcome
  REMOVE a.embedding, a.embedding_model, a.embedding_dim)
WITH a, row
CALL (a, row) {
  WITH a, row WHERE row.held_by IS NOT NULL
  MATCH (e:RepairEvent {key: row.held_by})
  MERGE (e)-[w:WITHDREW]->(a)
  ON CREATE SET w.at = datetime(), w.root = false, w.outcome = row.outcome
}
RETURN count(a) AS published
