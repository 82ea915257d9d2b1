// Whether the namespace has current versions beyond the first `$scan` in key order:
// if so, a `retrieve` that found fewer than it asked for stopped at its scan bound.
// mode: read
// params: $prefix, $scan
MATCH (a:Head)
WHERE a.key STARTS WITH $prefix
WITH a
ORDER BY a.key
SKIP $scan
LIMIT 1
RETURN count(a) > 0 AS more
