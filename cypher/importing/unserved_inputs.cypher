// Whether any staged version of an import derives from an input outside it that is not
// served now: if none does, the whole import is published served by `publish_served`.
// mode: read
// params: $key
RETURN EXISTS {
  MATCH (i:Artifact)-[:INFLUENCES]->(a:Importing)
  WHERE a.import_key = $key AND NOT i:Live AND NOT (i:Importing AND i.import_key = $key)
} AS unserved
