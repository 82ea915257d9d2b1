// Identity model (bench only): C(F), the barrier's reach. The pruning BFS runs over
// identities (INFLUENCES joins identities whose current versions read each other's
// current versions; INFLUENCED edges, behind, are not followed); each reached identity
// then finds its current version by the head_key index. Same columns as reach_cascade.
// mode: read
// params: $keys
MATCH (r:Identity)-[:INFLUENCES*0..]->(n)
WHERE r.key IN $keys
WITH DISTINCT n
MATCH (d:Head {key: n.key})
WHERE NOT d:Removed
RETURN d.key AS key, d.held_by AS held_by, d:Withdrawn AS withdrawn
