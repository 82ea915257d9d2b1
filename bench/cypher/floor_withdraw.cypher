// Write floor (bench only): take a batch of cascade versions out of serving by vid.
// mode: write
// params: $vids
UNWIND $vids AS v
MATCH (d:Artifact {vid: v})
REMOVE d:Live
RETURN count(d) AS withdrawn
