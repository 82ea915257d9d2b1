// The artifacts outside the import that its staged versions derive from (their keys): the
// publication locks their current versions, as a writer does, before deciding visibility.
// mode: read
// params: $key
MATCH (i:Artifact)-[:INFLUENCES]->(a:Importing)
WHERE a.import_key = $key AND NOT (i:Importing AND i.import_key = $key)
RETURN DISTINCT i.key AS key
