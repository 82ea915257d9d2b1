// The cascade C(F) a plan would withdraw, read-only: the same reach as the barrier.
// One record holding the list (per-record overhead in the driver dominates large reads).
// mode: read
// params: $keys
MATCH (r:Head)-[:INFLUENCES*0..]->(d)
WHERE r.key IN $keys AND NOT r:Removed
WITH DISTINCT d
WHERE d:Head AND NOT d:Removed
RETURN collect({vid: d.vid, uid: d.uid, version: d.version, kind: d.kind, arch: d.arch,
                value: d.value, repair_cost: d.repair_cost, recipe: d.recipe,
                inputs: d.inputs, root: d.key IN $keys, mode: null, selected: null,
                created: d.created_at.epochMillis / 1000.0, work_s: d.work_s,
                executable: null, reason: null}) AS rows
