// Current version of each given artifact key (no locks; for planning and checks).
// mode: read
// params: $keys
UNWIND $keys AS k
MATCH (a:Head {key: k})
RETURN a.key AS key, a.uid AS uid, a.version AS version, a:Live AS live,
       a:Removed AS removed, a.held_by AS held_by
