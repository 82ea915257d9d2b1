// bench.vector_index on Neo4j 2026.x: as create_shaped_vector_index, and each query
// searches $factor times as wide as the k it is asked for (the index's
// `vector.default_search_expansion_factor`; 5.26 refuses the setting).
// mode: write
// params: $m, $ef_construction, $factor
CREATE VECTOR INDEX artifact_embedding IF NOT EXISTS
FOR (a:Artifact) ON (a.embedding)
OPTIONS {indexConfig: {`vector.similarity_function`: 'cosine',
                       `vector.quantization.enabled`: false,
                       `vector.hnsw.m`: $m, `vector.hnsw.ef_construction`: $ef_construction,
                       `vector.default_search_expansion_factor`: $factor}}
