// Full artifact versions by vid (the withdrawn versions being repaired, their support).
// mode: read
// params: $vids
UNWIND $vids AS v
MATCH (a:Artifact {vid: v})
RETURN a {.*, created_at: null} AS artifact,
       [l IN labels(a) WHERE l IN ['Live', 'Withdrawn', 'Staged', 'Superseded', 'Removed']][0]
         AS visibility
