// First in every barrier transaction: take every stripe of the namespace's publication
// lock, in one order (no two barriers deadlock on them). A repair's batch writing now
// commits first; none starts until this barrier commits (publication/lock_stripe).
// mode: write
// params: $keys, $ns
UNWIND $keys AS k
WITH k ORDER BY k
MERGE (l:PublishLock {key: k})
ON CREATE SET l.ns = $ns
SET l._lock = true
REMOVE l._lock
RETURN count(l) AS locked
