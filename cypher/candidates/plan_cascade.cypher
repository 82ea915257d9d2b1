// The cascade C(F) a plan would withdraw, read-only: the same reach as the barrier.
// mode: read
// params: $keys
MATCH (r:Head)-[:INFLUENCES*0..]->(d)
WHERE r.key IN $keys AND NOT r:Removed
WITH DISTINCT d
WHERE d:Head AND NOT d:Removed
RETURN d.vid AS vid, d.uid AS uid, d.version AS version, d.kind AS kind, d.arch AS arch,
       d.value AS value, d.repair_cost AS repair_cost, d.recipe AS recipe,
       d.inputs AS inputs, d.key IN $keys AS root, null AS mode, null AS selected,
       null AS executable, null AS reason
