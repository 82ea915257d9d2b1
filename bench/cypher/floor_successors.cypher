// Write floor (bench only): the least a versioned republication writes per artifact: a
// new current version (Head, Live), numbered like the engine's (key@version), and a
// SUPERSEDES edge to the old one, kept as Superseded. Head moves first: head_key allows
// one per key.
// mode: write
// params: $vids
UNWIND $vids AS v
MATCH (old:Artifact {vid: v})
REMOVE old:Head
SET old:Superseded
CREATE (new:Artifact:Head:Live {vid: old.key + '@' + toString(old.version + 1),
        key: old.key, ns: old.ns, uid: old.uid, version: old.version + 1, kind: old.kind,
        arch: old.arch, value: old.value, repair_cost: old.repair_cost, content: old.content,
        recipe: old.recipe, inputs: old.inputs, created_at: datetime()})
CREATE (new)-[:SUPERSEDES]->(old)
RETURN count(new) AS written
