// Which of the given artifact keys (inputs outside the cascade) are served now: the uids
// of their current versions that are live, as one list (no locks; the mode map's input).
// mode: read
// params: $keys
UNWIND $keys AS k
MATCH (a:Head {key: k})
WHERE a:Live
RETURN collect(a.uid) AS live
