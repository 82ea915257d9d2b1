// Highest version ever written per artifact key: a successor takes the next one, even
// when an earlier, discarded attempt used a number.
// mode: read
// params: $keys
UNWIND $keys AS k
MATCH (a:Artifact {key: k})
RETURN k AS key, max(a.version) AS version
