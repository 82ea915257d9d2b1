// A repair event is created once per (namespace, id); re-running the same id finds it.
// `by` is the principal that asked for it: kept by erasure (it is no text of the memory).
// mode: write
// params: $key, $ns, $id, $type, $roots, $lam, $reason, $spec, $digest, $selector, $retry_of, $by
MERGE (e:RepairEvent {key: $key})
ON CREATE SET e.ns = $ns, e.id = $id, e.type = $type, e.roots = $roots, e.lambda = $lam,
              e.reason = $reason, e.spec = $spec, e.digest = $digest, e.selector = $selector,
              e.retry_of = $retry_of, e.by = $by,
              e.status = 'open', e.phase = 'created', e.phases = ['created'],
              e.phase_times = [toString(datetime())], e.created_at = datetime(),
              e.created = true
ON MATCH SET e.created = false
WITH e, e.created AS created
REMOVE e.created
RETURN e {.*, created_at: toString(e.created_at)} AS event, created
