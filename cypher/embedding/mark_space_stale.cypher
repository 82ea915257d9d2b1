// With embeddings turned off, writes leave versions without an embedding: the space (if
// any) says so, and search refuses until `reindex` has embedded them.
// mode: write
// params: $ns
MATCH (s:EmbeddingSpace {ns: $ns})
SET s.state = 'stale', s.updated_at = datetime()
RETURN s.state AS state
