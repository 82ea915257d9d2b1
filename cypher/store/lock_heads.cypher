// Take write locks on the current versions of the given artifacts, then read their
// visibility: a writer that derives from them, or a barrier that withdraws them, sees
// committed state only after every concurrent writer of these nodes has committed.
// mode: write
// params: $keys
UNWIND $keys AS k
MATCH (a:Head {key: k})
SET a._lock = true
REMOVE a._lock
RETURN a.key AS key, a.uid AS uid, a.version AS version, a:Live AS live,
       a:Removed AS removed, a.held_by AS held_by, a.inputs AS inputs
