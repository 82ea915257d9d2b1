// Every property of a page of a namespace's artifact versions and of every relationship
// touching them (in vid order, after $after): what `audit erasure` scans for copies.
// The embedding (numbers, never text) stays on the server.
// mode: read
// params: $ns, $after, $limit
MATCH (n:Artifact {ns: $ns})
WHERE n.vid > $after
WITH n ORDER BY n.vid LIMIT $limit
OPTIONAL MATCH (n)-[r]-()
RETURN n.vid AS id, labels(n) AS labels, n {.*, embedding: null} AS props,
       collect({id: elementId(r), type: type(r), props: properties(r)}) AS rels
ORDER BY id
