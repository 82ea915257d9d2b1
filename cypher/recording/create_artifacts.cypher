// Write a batch of fresh artifact versions and their influence edges, from the exact
// input versions they were derived from (`input_vids`: the current version, or the one a
// writer pinned). A row whose support is not served is written withdrawn and joins the
// audit of the event that holds that support (`late_arrival`: the barrier covers late
// arrivals) or that superseded or withdrew the pinned version (`stale_input`).
// Each row carries the embedding of its own content (stored as float32, with its model
// and dimension) and the searchable meta terms (search).
// mode: write
// params: $ns, $rows
UNWIND $rows AS row
CREATE (a:Artifact:Head {vid: row.vid, key: row.key, ns: $ns, uid: row.uid,
        version: row.version, kind: row.kind, arch: row.arch, content: row.content,
        value: row.value, repair_cost: row.repair_cost, recipe: row.recipe, meta: row.meta,
        inputs: row.inputs, created_at: datetime(), meta_terms: row.meta_terms, by: row.by,
        embedding_model: CASE WHEN row.live THEN row.embedding_model END,
        embedding_dim: CASE WHEN row.live THEN row.embedding_dim END})
FOREACH (_ IN CASE WHEN row.live THEN [1] ELSE [] END | SET a:Live)
FOREACH (_ IN CASE WHEN row.live THEN [] ELSE [1] END |
  SET a:Withdrawn, a.held_by = row.held_by, a.outcome = row.outcome)
WITH a, row
CALL (a, row) {
  WITH a, row WHERE row.embedding IS NOT NULL AND row.live
  CALL db.create.setNodeVectorProperty(a, 'embedding', row.embedding)
}
WITH a, row
CALL (a, row) {
  WITH a, row WHERE row.held_by IS NOT NULL
  MATCH (e:RepairEvent {key: row.held_by})
  MERGE (e)-[w:WITHDREW]->(a)
  ON CREATE SET w.at = datetime(), w.root = false, w.outcome = row.outcome
}
WITH a, row
UNWIND range(0, size(row.input_vids) - 1) AS pos
MATCH (i:Artifact {vid: row.input_vids[pos]})
CREATE (i)-[:INFLUENCES {pos: pos}]->(a)
