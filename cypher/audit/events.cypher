// Repair events of a namespace with their phase and figures, who asked and why, newest
// first.
// Browser: :param ns => 'default'
// mode: read
// params: $ns
MATCH (e:RepairEvent {ns: $ns})
RETURN e.id AS event, e.type AS type, e.roots AS roots, e.status AS status,
       e.phase AS phase, e.lambda AS lambda, e.withdrawn AS withdrawn,
       e.published AS published, e.removed AS removed, e.failed AS failed,
       e.by AS by, e.reason AS reason, toString(e.created_at) AS created_at
ORDER BY e.created_at DESC
