// An import record and how many versions it has staged (not served) right now.
// mode: read
// params: $key
MATCH (i:Import {key: $key})
RETURN i {.*, started_at: toString(i.started_at), ended_at: toString(i.ended_at)} AS import,
       COUNT { MATCH (a:Importing) WHERE a.import_key = $key } AS staged
