// correct / migrate: the replacement X_delta becomes the root's next version, served at
// once (it is fresh support), while the old root is superseded in the same transaction.
// It takes the old root's RELATED edges (influence edges: barrier/link_replacements).
// The replacement carries the embedding of its own content (computed before this
// transaction); the old root's embedding goes with its service.
// mode: write
// params: $event_key, $rows
MATCH (e:RepairEvent {key: $event_key})
UNWIND $rows AS row
MATCH (old:Artifact {vid: row.old_vid})
MERGE (new:Artifact {vid: row.vid})
ON CREATE SET new.key = row.key, new.ns = old.ns, new.uid = old.uid,
              new.version = row.version, new.kind = old.kind, new.arch = old.arch,
              new.content = row.content, new.value = old.value,
              new.repair_cost = old.repair_cost, new.recipe = coalesce(row.recipe, old.recipe),
              new.meta = coalesce(row.meta, old.meta),
              new.inputs = row.inputs, new.created_at = datetime(), new.event = e.id,
              new.meta_terms = CASE WHEN row.meta IS NULL THEN old.meta_terms
                                    ELSE row.meta_terms END,
              new.embedding_model = row.embedding_model, new.embedding_dim = row.embedding_dim
REMOVE old:Head, old:Withdrawn, old:Live, old.embedding, old.embedding_model,
       old.embedding_dim
SET old:Superseded, new:Head, new:Live
MERGE (new)-[:SUPERSEDES]->(old)
MERGE (e)-[w:WITHDREW]->(old)
ON CREATE SET w.at = datetime(), w.root = true
SET w.outcome = 'root_replaced'
MERGE (e)-[:PUBLISHED]->(new)
WITH old, new, row
CALL (new, row) {
  WITH new, row WHERE row.embedding IS NOT NULL AND new.embedding IS NULL
  CALL db.create.setNodeVectorProperty(new, 'embedding', row.embedding)
}
WITH old, new
CALL (old, new) {
  MATCH (old)-[:RELATED]-(x:Artifact)
  MATCH (h:Head {key: x.key})
  WHERE h <> new
  MERGE (new)-[:RELATED]-(h)
}
RETURN count(new) AS replaced
