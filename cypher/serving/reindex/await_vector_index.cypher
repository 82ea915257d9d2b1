// `reindex --compact`: wait (at most $timeout_s) until the re-created vector index is
// online; the procedure fails when the time runs out.
// mode: read
// params: $timeout_s
CALL db.awaitIndex('artifact_embedding', $timeout_s)
RETURN true AS online
