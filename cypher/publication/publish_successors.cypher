// Republish validated successors: each takes its predecessor's place (Head, Live), the
// old version is kept as Superseded for audit. Runs per topological batch, in the same
// transaction as the batch's influence edges.
// mode: write
// params: $event_key, $rows
MATCH (e:RepairEvent {key: $event_key})
UNWIND $rows AS row
MATCH (old:Artifact {vid: row.old_vid}), (new:Artifact:Staged {vid: row.vid})
REMOVE old:Head, old:Withdrawn, old:Live, new:Staged
SET old:Superseded, new:Head, new:Live, new.published_at = datetime()
MERGE (e)-[:PUBLISHED]->(new)
WITH e, old
MATCH (e)-[w:WITHDREW]->(old)
SET w.outcome = 'published'
RETURN count(old) AS published
