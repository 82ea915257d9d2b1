// C(F): every current version reachable from the roots over INFLUENCES, roots included.
// DISTINCT over the end node with an unnamed relationship lets the planner use the
// pruning BFS expand (linear in the cascade's edges; no path enumeration on diamonds).
// mode: read
// params: $keys
MATCH (r:Head)-[:INFLUENCES*0..]->(d)
WHERE r.key IN $keys
WITH DISTINCT d
WHERE d:Head AND NOT d:Removed
RETURN d.key AS key, d.held_by AS held_by, d:Withdrawn AS withdrawn
