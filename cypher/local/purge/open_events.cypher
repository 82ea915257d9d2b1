// Events that have not completed, in every namespace: a purge restarts the server, which
// would interrupt them (and an open erasing event has not erased yet).
// mode: read
// params:
MATCH (e:RepairEvent)
WHERE NOT e.status IN ['completed', 'failed']
RETURN e.ns AS ns, e.id AS id, e.phase AS phase
ORDER BY e.ns, e.created_at
