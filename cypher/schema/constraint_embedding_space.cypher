// One embedding space per namespace: the model and dimension its embeddings were made
// with, and whether they are complete (`ready`), being replaced (`reindexing`) or missing
// for some versions (`stale`). Search refuses a query of another model.
// mode: write
// params:
CREATE CONSTRAINT embedding_space_ns IF NOT EXISTS FOR (s:EmbeddingSpace) REQUIRE s.ns IS UNIQUE
