// The benchmark's baseline without search: drop its two indexes (schema apply restores
// them, repopulating from what the database holds).
// mode: write
// params:
DROP INDEX artifact_embedding IF EXISTS
