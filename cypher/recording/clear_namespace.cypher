// Delete every node of a namespace, in batches (auto-commit only; not for serving data).
// mode: write
// params: $ns
MATCH (n) WHERE n.ns = $ns
CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 5000 ROWS
