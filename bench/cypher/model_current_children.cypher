// Bench only, today's model: one step of the reach restricted to current versions (each
// hop from a current version to a current version that reads it). Repeated to a fixpoint
// it gives the part of C(F) that does not pass through superseded versions, which is
// what the identity model's reach computes (see audit_differences).
// mode: read
// params: $vids
UNWIND $vids AS v
MATCH (p:Artifact {vid: v})-[:INFLUENCES]->(c:Head)
WHERE p:Head
RETURN DISTINCT c.vid AS vid, c.key AS key, c:Removed AS removed
