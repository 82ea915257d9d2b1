// Full artifact versions by vid (the withdrawn versions being repaired, their inputs),
// each with the exact input versions it was built from (its INFLUENCES in-edges).
// mode: read
// params: $vids
UNWIND $vids AS v
MATCH (a:Artifact {vid: v})
RETURN a {.*, created_at: null} AS artifact,
       [l IN labels(a) WHERE l IN ['Live', 'Withdrawn', 'Staged', 'Superseded', 'Removed']][0]
         AS visibility,
       [(p:Artifact)-[r:INFLUENCES]->(a) | [r.pos, p.vid]] AS used
