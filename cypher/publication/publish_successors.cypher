// Republish validated successors: each takes its predecessor's place (Head, Live), the
// old version is kept as Superseded for audit, and the successor gets influence edges
// from the inputs it actually used, so the next event sees complete provenance, and its
// predecessor's RELATED edges (to each neighbour's current version). Runs per
// topological batch. Everything hangs on `new` still being Staged, so a rerun of a
// committed batch (a retried transaction) matches nothing and writes nothing; that is
// why the edges can be CREATEd rather than MERGEd (a staged node has none).
// The old version's embedding goes (it can never be served again), unless the
// successor's is `$deferred`: then the embedding writer adds the successor's just after
// this commit (copying the old one's when the content is unchanged) and drops the old one
// in the same transaction; search keeps `Live` versions only, so it is never served.
// Otherwise the successor's was written when it was staged (none when `row.embeds` is
// false: meta `memorepair_embed: false`, and then the old one's goes now too).
// Rows: {old_vid, vid, inputs: [[position, input key], ...], embeds} (one entry per input
// key).
// mode: write
// params: $event_key, $rows, $deferred
MATCH (e:RepairEvent {key: $event_key})
UNWIND $rows AS row
MATCH (new:Artifact:Staged {vid: row.vid})
MATCH (old:Artifact {vid: row.old_vid})
REMOVE old:Head, old:Withdrawn, old:Live, new:Staged
SET old:Superseded, new:Head, new:Live, new.published_at = datetime()
FOREACH (_ IN CASE WHEN $deferred AND row.embeds THEN [] ELSE [1] END |
  REMOVE old.embedding, old.embedding_model, old.embedding_dim)
CREATE (e)-[:PUBLISHED]->(new)
WITH e, old, new, row
MATCH (e)-[w:WITHDREW]->(old)
SET w.outcome = 'published'
WITH old, new, row
CALL (old, new) {
  MATCH (old)-[:RELATED]-(x:Artifact)
  MATCH (h:Head {key: x.key})
  WHERE h <> new
  MERGE (new)-[:RELATED]-(h)
}
WITH new, row
CALL (new, row) {
  UNWIND row.inputs AS input
  MATCH (i:Head {key: input[1]})
  WHERE i:Live
  CREATE (i)-[:INFLUENCES {pos: input[0]}]->(new)
  RETURN count(*) AS edges
}
RETURN count(new) AS published, sum(edges) AS edges
