// Take write locks on the current versions of a batch's retained inputs, then read which
// are served: a barrier that withdraws one of them commits either before (and the
// successor is not published) or after this batch (and its reach sees the new edges).
// Returns one list of the uids still live.
// mode: write
// params: $keys
UNWIND $keys AS k
MATCH (a:Head {key: k})
SET a._lock = true
REMOVE a._lock
WITH a
WHERE a:Live
RETURN collect(a.uid) AS live
