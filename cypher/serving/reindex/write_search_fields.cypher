// `reindex`: new meta terms for each version, and, in rows that carry one, its new
// embedding (float32) with the model and dimension it was made with.
// mode: write
// params: $rows
UNWIND $rows AS row
MATCH (a:Artifact {vid: row.vid})
SET a.meta_terms = row.meta_terms
WITH a, row
CALL (a, row) {
  WITH a, row WHERE row.embedding IS NOT NULL
  CALL db.create.setNodeVectorProperty(a, 'embedding', row.embedding)
  SET a.embedding_model = row.embedding_model, a.embedding_dim = row.embedding_dim
}
RETURN count(a) AS written
