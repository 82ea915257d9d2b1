// Every property of a namespace's repair events (their relationships are scanned from the
// artifacts they point at).
// mode: read
// params: $ns
MATCH (e:RepairEvent {ns: $ns})
RETURN e.key AS id, labels(e) AS labels, properties(e) AS props, [] AS rels
