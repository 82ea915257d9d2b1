// The deferred embeddings (MEMOREPAIR_RECORD_EMBEDDING=deferred), written just after the
// versions committed: fresh records, and successors a repair published without one.
// Only a version still served (or staged by an import, published with it) and still
// without one gets it: one withdrawn meanwhile is never served again (its successor gets
// its own), and an erased one must not regain a vector of its text. A row either carries the vector of the version's own content, or
// asks (`reuse`) for its predecessor's, copied inside the graph when the two contents are
// equal and the predecessor's vector is of this space (no embedder call, no vector on the
// wire); `missing` names the rows that asked for a copy and found none (the caller embeds
// them). The superseded predecessor's vector goes in the same transaction: publication
// leaves it for this copy, and it is never served (every search keeps `Live` only).
// The version is locked before it is looked at: a barrier, replacement or publication
// that withdraws or supersedes it concurrently commits either before (and it gets no
// vector) or after this write (and removes it); without the lock a vector could land on
// a version that stopped being served between this query's read and its write.
// mode: write
// params: $rows, $model
UNWIND $rows AS row
MATCH (a:Artifact {vid: row.vid})
SET a._lock = true
REMOVE a._lock
WITH a, row
OPTIONAL MATCH (a)-[:SUPERSEDES]->(old:Superseded)
WITH a, row, old, (a:Live OR a:Importing) AND a.embedding IS NULL AND a.erased_by IS NULL
       AS wanted
WITH a, row, old, wanted,
     CASE WHEN row.embedding IS NOT NULL THEN row.embedding
          WHEN row.reuse AND old.content = a.content AND old.embedding_model = $model
            THEN old.embedding END AS vector
CALL (a, vector, wanted, row) {
  WITH a, vector, row WHERE wanted AND vector IS NOT NULL
  CALL db.create.setNodeVectorProperty(a, 'embedding', vector)
  SET a.embedding_model = $model, a.embedding_dim = size(vector)
}
FOREACH (gone IN CASE WHEN old IS NULL THEN [] ELSE [old] END |
  REMOVE gone.embedding, gone.embedding_model, gone.embedding_dim)
RETURN count(CASE WHEN wanted AND vector IS NOT NULL THEN 1 END) AS written,
       collect(CASE WHEN wanted AND vector IS NULL AND a.content <> '' THEN a.vid END)
         AS missing
