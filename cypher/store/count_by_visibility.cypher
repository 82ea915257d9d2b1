// How much of a namespace is served, withdrawn, staged, superseded or removed.
// mode: read
// params: $ns
MATCH (a:Artifact {ns: $ns})
RETURN sum(CASE WHEN a:Live THEN 1 ELSE 0 END) AS live,
       sum(CASE WHEN a:Withdrawn THEN 1 ELSE 0 END) AS withdrawn,
       sum(CASE WHEN a:Staged THEN 1 ELSE 0 END) AS staged,
       sum(CASE WHEN a:Superseded THEN 1 ELSE 0 END) AS superseded,
       sum(CASE WHEN a:Removed THEN 1 ELSE 0 END) AS removed
