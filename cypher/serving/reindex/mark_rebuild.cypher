// `reindex --compact`, first: say that the vector index is being rebuilt, so searches take
// the exact path instead of asking it (no content: a name and a time).
// mode: write
// params:
MERGE (r:IndexRebuild {name: 'artifact_embedding'})
SET r.started_at = datetime()
RETURN r.name AS name
