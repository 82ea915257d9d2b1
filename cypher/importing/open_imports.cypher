// The imports of a namespace that neither published nor discarded their batch (a process
// killed while writing one, or one still writing), with how many versions each staged.
// mode: read
// params: $ns
MATCH (i:Import)
WHERE i.ns = $ns AND i.status = 'open'
RETURN i {.*, started_at: toString(i.started_at), ended_at: toString(i.ended_at)} AS import,
       COUNT { MATCH (a:Importing) WHERE a.import_key = i.key } AS staged
ORDER BY i.started_at
