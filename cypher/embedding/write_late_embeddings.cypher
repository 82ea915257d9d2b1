// The deferred embeddings of freshly recorded versions (MEMOREPAIR_RECORD_EMBEDDING=
// deferred), written just after their record committed. Only a version still served (or
// staged by an import, published with it) and still without one gets it: one withdrawn
// meanwhile is never served again (its successor is embedded when staged), and an erased
// one must not regain a vector of its text.
// mode: write
// params: $rows
UNWIND $rows AS row
MATCH (a:Artifact {vid: row.vid})
WHERE (a:Live OR a:Importing) AND a.embedding IS NULL AND a.erased_by IS NULL
CALL db.create.setNodeVectorProperty(a, 'embedding', row.embedding)
SET a.embedding_model = row.embedding_model, a.embedding_dim = row.embedding_dim
RETURN count(a) AS written
