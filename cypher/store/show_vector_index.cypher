// The vector index's configuration as the server holds it (its HNSW shape is fixed when
// it is built; `schema apply` compares it with the configured one). No row: no index.
// mode: read
// params:
SHOW VECTOR INDEXES YIELD name, options
WHERE name = 'artifact_embedding'
RETURN options.indexConfig AS config
