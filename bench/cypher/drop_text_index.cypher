// The benchmark's baseline without search, second index (one statement per file).
// mode: write
// params:
DROP INDEX artifact_search IF EXISTS
