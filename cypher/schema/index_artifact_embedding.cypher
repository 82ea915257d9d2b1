// Vector search (cosine) over the embeddings of artifact versions. Only versions that
// can be served carry one (live, staged, or withdrawn by an open event): publication,
// close and discard drop the embedding of a version that stops being current, so the
// index holds current versions only. It is keyed on `Artifact`, which withdrawal never
// touches: the barrier stays a label change with no index work. Served-ness (`Live`),
// namespace, kind, meta and model are filtered by the search queries. No fixed
// dimension: vectors of the previous model stay indexed while `reindex` replaces them
// (a query only ever compares vectors of its own model and dimension). The HNSW shape
// ($m links per vector, $ef_construction candidates per insertion) comes from the
// settings (MEMOREPAIR_SEARCH_HNSW_M, _EF_CONSTRUCTION); an existing index keeps the
// shape it was built with until `memorepair reindex --compact` builds it again.
// mode: write
// params: $m, $ef_construction
CREATE VECTOR INDEX artifact_embedding IF NOT EXISTS
FOR (a:Artifact) ON (a.embedding)
OPTIONS {indexConfig: {`vector.similarity_function`: 'cosine',
                       `vector.quantization.enabled`: false,
                       `vector.hnsw.m`: $m, `vector.hnsw.ef_construction`: $ef_construction}}
