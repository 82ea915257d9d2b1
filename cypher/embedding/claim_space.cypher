// The namespace's embedding space, created by the first write that embeds: which model
// and dimension its embeddings have. A writer whose embedder differs is refused by the
// caller (the transaction rolls back), so one namespace never mixes two models.
// mode: write
// params: $ns, $model, $dimension
MERGE (s:EmbeddingSpace {ns: $ns})
ON CREATE SET s.model = $model, s.dimension = $dimension, s.state = 'ready',
              s.updated_at = datetime()
RETURN s.model AS model, s.dimension AS dimension, s.state AS state
