// What `reindex` rewrites: every version of the namespace that is served or staged, or
// still carries an embedding, with the model of the embedding it has (null: none).
// mode: read
// params: $ns
MATCH (a:Artifact {ns: $ns})
WHERE a:Live OR (a:Staged AND a.discarded IS NULL) OR a.embedding_model IS NOT NULL
RETURN a.vid AS vid, a.embedding_model AS model
ORDER BY vid
