// Publish fresh successors in the transaction of their batch, written once: each is
// created current (Head, Live) in its predecessor's place, which is kept as Superseded,
// with its PUBLISHED and SUPERSEDES edges, the predecessor's WITHDREW outcome, the
// predecessor's RELATED edges (to each neighbour's current version) and influence edges
// from the inputs it actually used (`edges`: [[position, input key], ...]). A successor
// that may not be published is staged instead (execution/stage_successors). Keyed by
// vid: a row whose successor exists (a retried transaction that had committed) writes
// nothing. Rows carry what a staging row carries (execution.stage_rows). `$deferred`:
// the embedding writer adds the successor's vector just after this commit and drops the
// predecessor's (search keeps `Live` only); else the row carries it and the
// predecessor's goes now, as it does for a successor never embedded (`row.embeds` false:
// meta `memorepair_embed: false`).
// mode: write
// params: $event_key, $rows, $deferred
MATCH (e:RepairEvent {key: $event_key})
UNWIND $rows AS row
OPTIONAL MATCH (existing:Artifact {vid: row.vid})
WITH e, row, existing
WHERE existing IS NULL
MATCH (old:Artifact {vid: row.old_vid})
REMOVE old:Head, old:Withdrawn, old:Live
SET old:Superseded
FOREACH (_ IN CASE WHEN $deferred AND row.embeds THEN [] ELSE [1] END |
  REMOVE old.embedding, old.embedding_model, old.embedding_dim)
CREATE (new:Artifact:Head:Live {vid: row.vid, key: old.key, ns: old.ns, uid: old.uid,
        version: row.version, kind: old.kind, arch: old.arch, value: old.value,
        repair_cost: old.repair_cost, created_at: datetime(), published_at: datetime(),
        event: e.id, content: row.content, recipe: row.recipe, meta: row.meta,
        inputs: row.inputs, validated: row.validated, validation: row.validation,
        operator: row.operator, work_s: row.work_s, meta_terms: row.meta_terms,
        embedding_model: row.embedding_model, embedding_dim: row.embedding_dim})
CREATE (new)-[:SUPERSEDES]->(old)
CREATE (e)-[:PUBLISHED]->(new)
WITH e, old, new, row
CALL (new, row) {
  WITH new, row WHERE row.embedding IS NOT NULL
  CALL db.create.setNodeVectorProperty(new, 'embedding', row.embedding)
}
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
  UNWIND row.edges AS input
  MATCH (i:Head {key: input[1]})
  WHERE i:Live
  CREATE (i)-[:INFLUENCES {pos: input[0]}]->(new)
  RETURN count(*) AS edges
}
RETURN count(new) AS published, sum(edges) AS edges
