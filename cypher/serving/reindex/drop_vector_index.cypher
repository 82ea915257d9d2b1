// `reindex --compact`: drop the vector index so that it is built again in one bulk
// population (schema/index_artifact_embedding). Searches meanwhile take the exact path.
// mode: write
// params:
DROP INDEX artifact_embedding IF EXISTS
