// bench.vector_index: the vector index's configuration as the server holds it.
// mode: read
// params:
SHOW INDEXES YIELD name, options WHERE name = 'artifact_embedding'
RETURN options.indexConfig AS config, options.indexProvider AS provider
