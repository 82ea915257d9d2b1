// How many exposure records a namespace holds (tests: removed with the namespace).
// mode: read
// params: $ns
MATCH (x:Exposure {ns: $ns})
RETURN count(x) AS n
