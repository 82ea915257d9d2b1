// A repair's batch writer takes its stripe of the namespace's publication lock before it
// reads which retained inputs are served: a batch in the other stripe does not wait for
// it, a barrier (which takes every stripe, barrier/lock_publishers) does. So a barrier
// that withdraws an input commits either before this batch reads it (and the successor
// is not published) or after this batch commits (and its reach sees the new edges).
// mode: write
// params: $key, $ns
MERGE (l:PublishLock {key: $key})
ON CREATE SET l.ns = $ns
SET l._lock = true
REMOVE l._lock
RETURN l.key AS key
