// How much of a namespace is served, withdrawn, staged, superseded or removed. A current
// version that is neither served nor removed is withdrawn, labelled or not yet (between
// a barrier and its hold step).
// mode: read
// params: $ns
MATCH (a:Artifact {ns: $ns})
RETURN sum(CASE WHEN a:Live THEN 1 ELSE 0 END) AS live,
       sum(CASE WHEN a:Withdrawn OR (a:Head AND NOT a:Live AND NOT a:Removed) THEN 1 ELSE 0 END)
         AS withdrawn,
       sum(CASE WHEN a:Staged THEN 1 ELSE 0 END) AS staged,
       sum(CASE WHEN a:Superseded THEN 1 ELSE 0 END) AS superseded,
       sum(CASE WHEN a:Removed THEN 1 ELSE 0 END) AS removed
