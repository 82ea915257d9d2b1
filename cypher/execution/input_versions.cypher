// The exact input versions each given artifact version was built from (its INFLUENCES
// in-edges): the invalidated ones are what a successor must not draw on.
// mode: read
// params: $vids
UNWIND $vids AS v
MATCH (p:Artifact)-[r:INFLUENCES]->(:Artifact {vid: v})
RETURN v AS vid, r.pos AS pos, p {.*, created_at: null} AS artifact,
       [l IN labels(p) WHERE l IN ['Live', 'Withdrawn', 'Staged', 'Superseded', 'Removed']][0]
         AS visibility
