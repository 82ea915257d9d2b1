// Benchmark baseline: the reach query without DISTINCT, which the planner can only
// answer by enumerating paths (exponential on diamond DAGs). Never used by the engine.
// mode: read
// params: $keys
MATCH (r:Head)-[:INFLUENCES*0..]->(d)
WHERE r.key IN $keys
RETURN count(d) AS paths
