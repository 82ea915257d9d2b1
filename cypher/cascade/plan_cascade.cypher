// The cascade C(F) a plan would withdraw, read-only: the same reach as the barrier.
// One record holding the list (per-record overhead in the driver dominates large reads).
// `work_s`: the measured seconds of the last repair that built a version of the uid
// (the current version's own, or an earlier one's when a write replaced it since).
// mode: read
// params: $keys
MATCH (r:Head)-[:INFLUENCES*0..]->(d)
WHERE r.key IN $keys AND NOT r:Removed
WITH DISTINCT d
WHERE d:Head AND NOT d:Removed
RETURN collect({vid: d.vid, uid: d.uid, version: d.version, kind: d.kind, arch: d.arch,
                value: d.value, repair_cost: d.repair_cost, recipe: d.recipe,
                inputs: d.inputs, root: d.key IN $keys, mode: null, selected: null,
                created: d.created_at.epochMillis / 1000.0,
                work_s: CASE WHEN d.work_s IS NULL AND d.version > 1
                        THEN head(COLLECT { MATCH (p:Artifact {key: d.key})
                                            WHERE p.work_s IS NOT NULL AND p.version < d.version
                                            RETURN p.work_s ORDER BY p.version DESC LIMIT 1 })
                        ELSE d.work_s END,
                executable: null, reason: null}) AS rows
