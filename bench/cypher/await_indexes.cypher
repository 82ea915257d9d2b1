// Wait until every index is online (after the baseline re-creates the search indexes).
// mode: read
// params:
CALL db.awaitIndexes(1800)
