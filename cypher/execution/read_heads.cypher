// Full current versions by artifact key: the retained support of a successor.
// mode: read
// params: $keys
UNWIND $keys AS k
MATCH (a:Head {key: k})
RETURN a {.*, created_at: null} AS artifact,
       [l IN labels(a) WHERE l IN ['Live', 'Withdrawn', 'Staged', 'Superseded', 'Removed']][0]
         AS visibility
