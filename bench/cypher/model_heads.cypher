// Bench only: the current version of each key, and whether it is served or removed (inputs whose
// edge was behind, for a republish; the served part of a reach, for the audit).
// mode: read
// params: $keys
UNWIND $keys AS k
MATCH (d:Head {key: k})
RETURN d.key AS key, d.vid AS vid, d:Live AS live, d:Removed AS removed
