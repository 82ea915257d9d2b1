// The first version of each given uid, as stored, with the exact input versions it was
// derived from: a batch run again skips items identical to it and refuses different ones.
// mode: read
// params: $vids
UNWIND $vids AS v
MATCH (a:Artifact {vid: v})
OPTIONAL MATCH (i:Artifact)-[r:INFLUENCES]->(a)
WITH a, collect({pos: r.pos, vid: i.vid}) AS edges
RETURN a.uid AS uid, a.version AS version, a.kind AS kind, a.arch AS arch,
       a.content AS content, a.value AS value, a.repair_cost AS repair_cost,
       a.recipe AS recipe, a.meta AS meta, a.inputs AS inputs,
       [e IN edges WHERE e.vid IS NOT NULL] AS input_vids, a.erased_by AS erased_by,
       CASE WHEN a:Importing THEN a.import_key END AS staged_by
