// Every node of a namespace with its labels, identity, relationships out and counters:
// tests compare it before and after a refused call, which may change nothing at all.
// (A scan of every node: for test namespaces only.)
// mode: read
// params: $ns
MATCH (n)
WHERE n.ns = $ns
OPTIONAL MATCH (n)-[r]->()
WITH n, count(r) AS out
RETURN labels(n) AS labels, coalesce(n.vid, n.key, n.id, n.uid) AS id, out,
       n.count AS count, n.status AS status, n.phase AS phase
ORDER BY id, labels
