// Take back versions written by an import that failed part-way (nothing half-imported).
// mode: write
// params: $vids
UNWIND $vids AS v
MATCH (a:Artifact {vid: v})
DETACH DELETE a
