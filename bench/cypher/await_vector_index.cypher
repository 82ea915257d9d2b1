// bench.vector_index: wait (at most an hour) until the rebuilt vector index is online.
// mode: read
// params:
CALL db.awaitIndex('artifact_embedding', 3600)
RETURN true AS online
