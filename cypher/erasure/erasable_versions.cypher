// Every version holding the erased text or derived from it: the roots' versions from
// before the event, everything reachable from them over INFLUENCES that is not served,
// and the staged (discarded) attempts that would have replaced those. One list of vids.
// mode: read
// params: $event_key, $keys
MATCH (e:RepairEvent {key: $event_key})
MATCH (r:Artifact)
WHERE r.key IN $keys AND NOT (e)-[:PUBLISHED]->(r)
MATCH (r)-[:INFLUENCES*0..]->(d)
WITH DISTINCT d
WHERE NOT d:Live
OPTIONAL MATCH (s:Staged)-[:SUPERSEDES]->(d)
WITH collect(d.vid) AS reached, collect(s.vid) AS attempts
RETURN reached + [v IN attempts WHERE NOT v IN reached] AS vids
