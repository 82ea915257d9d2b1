// Stage successors: new versions, invisible to serving, linked to what they replace.
// The version is the one in the vid (the highest ever written for the uid, plus one).
// Keyed by vid: a row whose successor already exists (a retried transaction that had
// committed) is skipped, so a rerun writes nothing twice; a fresh successor has no
// relationships yet, so its edges are CREATEd. A row carries the embedding of the
// successor's own content (computed before it is staged), so publication only relabels;
// or none, when embeddings are deferred: the embedding writer adds it after publication.
// `work_s`: the measured seconds of its build and validation, the default repair cost of
// the next event that withdraws it (values.py).
// mode: write
// params: $event_key, $rows
MATCH (e:RepairEvent {key: $event_key})
UNWIND $rows AS row
OPTIONAL MATCH (existing:Artifact {vid: row.vid})
WITH e, row, existing
WHERE existing IS NULL
MATCH (old:Artifact {vid: row.old_vid})
CREATE (new:Artifact:Staged {vid: row.vid, key: old.key, ns: old.ns, uid: old.uid,
        version: row.version, kind: old.kind, arch: old.arch, value: old.value,
        repair_cost: old.repair_cost, created_at: datetime(), event: e.id,
        content: row.content, recipe: row.recipe, meta: row.meta, inputs: row.inputs,
        validated: row.validated, validation: row.validation, operator: row.operator,
        work_s: row.work_s,
        meta_terms: row.meta_terms, embedding_model: row.embedding_model,
        embedding_dim: row.embedding_dim})
CREATE (new)-[:SUPERSEDES]->(old)
CREATE (e)-[:STAGED]->(new)
WITH new, row
CALL (new, row) {
  WITH new, row WHERE row.embedding IS NOT NULL
  CALL db.create.setNodeVectorProperty(new, 'embedding', row.embedding)
}
RETURN count(new) AS staged
