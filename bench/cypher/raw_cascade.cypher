// Benchmark baseline: the raw cost of reading a cascade subgraph from Neo4j, each node
// with its content and its influence out-edges (which stay inside the cascade).
// mode: read
// params: $keys
MATCH (r:Head)-[:INFLUENCES*0..]->(d)
WHERE r.key IN $keys
WITH DISTINCT d
WHERE d:Head AND NOT d:Removed
OPTIONAL MATCH (d)-[:INFLUENCES]->(c:Head)
RETURN d.vid AS vid, d.kind AS kind, d.content AS content, d.inputs AS inputs,
       collect(c.vid) AS out
