// Identity model (bench only, replaying an engine event): the highest version ever
// written per key (staged attempts included), which the next version number follows.
// mode: read
// params: $keys
UNWIND $keys AS k
MATCH (v:Artifact {key: k})
RETURN k AS key, max(v.version) AS version
