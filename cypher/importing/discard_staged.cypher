// Delete the staged versions of an import that will not be published (never served, so
// this needs no single transaction: a discard cut short is finished by running it again).
// mode: write
// params: $key
MATCH (a:Importing)
WHERE a.import_key = $key
CALL (a) { DETACH DELETE a } IN TRANSACTIONS OF 5000 ROWS
