// Lock an import record for its publication (or discarding) and read its state: a second
// publisher waits, then finds it published.
// mode: write
// params: $key
MATCH (i:Import {key: $key})
SET i._lock = true
REMOVE i._lock
RETURN i.status AS status, i.count AS count, i.written AS written,
       COUNT { MATCH (a:Importing) WHERE a.import_key = $key } AS staged
