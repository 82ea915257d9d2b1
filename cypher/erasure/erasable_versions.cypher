// Every version holding the erased text or derived from it: the roots' versions from
// before the event, everything reachable from them over INFLUENCES that is not served,
// and the staged (discarded) attempts that would have replaced those. One list of vids;
// with $unredacted, only those not redacted yet (the erasure reads its reach again until
// none is left: a late write redacted as it was written is not read twice). The roots
// are collected first, so that the reach is planned as the pruning BFS expand.
// mode: read
// params: $event_key, $keys, $unredacted
MATCH (e:RepairEvent {key: $event_key})
MATCH (r:Artifact)
WHERE r.key IN $keys AND NOT (e)-[:PUBLISHED]->(r)
WITH collect(r) AS roots
UNWIND roots AS r
MATCH (r)-[:INFLUENCES*0..]->(d)
WITH DISTINCT d
WHERE NOT d:Live
OPTIONAL MATCH (s:Staged)-[:SUPERSEDES]->(d)
WITH collect(d.vid) AS reached, collect(s) AS attempts,
     [x IN collect(d) WHERE NOT $unredacted OR x.erased_by IS NULL | x.vid] AS pending
RETURN pending + [s IN attempts WHERE NOT s.vid IN reached
                  AND (NOT $unredacted OR s.erased_by IS NULL) | s.vid] AS vids
