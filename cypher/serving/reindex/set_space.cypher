// `reindex` names the namespace's embedding space: `reindexing` while it replaces the
// embeddings (search refuses meanwhile), `ready` once every version has one of $model.
// mode: write
// params: $ns, $model, $dimension, $state
MERGE (s:EmbeddingSpace {ns: $ns})
SET s.model = $model, s.dimension = $dimension, s.state = $state, s.updated_at = datetime()
RETURN s.model AS model, s.state AS state
