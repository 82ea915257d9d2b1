// Identity model (bench only): republish a batch, the counterpart of floor_successors: a
// new current version (Head, Live) per artifact with its SUPERSEDES edge, the old one kept
// as Superseded, and in `reads` the version of each input it was built from (the inputs'
// current versions, which the caller knows: it staged them or read them). No influence
// edge is written: the identities' edges already say who reads whom. Otherwise this is
// floor_successors, plus `Withdrawn` coming off a version an earlier event left withdrawn
// (an event replay; in the floor there is none).
// Rows: {vid: the version replaced, version: the new one's number (the highest ever
// written for the uid plus one, as the engine numbers them), inputs: [uid, ...],
// reads: [version, ...] aligned with inputs}.
// mode: write
// params: $rows
UNWIND $rows AS row
MATCH (old:Artifact {vid: row.vid})
REMOVE old:Head, old:Withdrawn
SET old:Superseded
CREATE (new:Artifact:Head:Live {vid: old.key + '@' + toString(row.version),
        key: old.key, ns: old.ns, uid: old.uid, version: row.version, kind: old.kind,
        arch: old.arch, value: old.value, repair_cost: old.repair_cost, content: old.content,
        recipe: old.recipe, inputs: row.inputs, reads: row.reads, created_at: datetime()})
CREATE (new)-[:SUPERSEDES]->(old)
RETURN count(new) AS written
