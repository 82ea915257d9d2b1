// `reindex --compact`, last: the rebuilt vector index is online; searches use it again.
// mode: write
// params:
MATCH (r:IndexRebuild {name: 'artifact_embedding'})
DELETE r
