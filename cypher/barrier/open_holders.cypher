// Which of the given events of namespace $ns are still open: a cascade they hold is busy.
// (Only this namespace's events: the error that lists them never names another tenant's.)
// mode: read
// params: $keys, $ns
UNWIND $keys AS k
MATCH (e:RepairEvent {key: k})
WHERE e.ns = $ns AND NOT e.status IN ['completed', 'failed']
RETURN e.key AS key, e.id AS id, e.status AS status
