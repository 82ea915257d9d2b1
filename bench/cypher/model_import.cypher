// Identity model (bench only): write a batch of first versions. Each version is an
// Artifact node like today's, carrying in `reads` the version of each input it was built
// from (integers aligned with `inputs`: a short array, stored inline); its uid gets an Identity node, and the influence edges join identities
// (input identity -> derived identity), not versions. Inputs come first (input-first
// order), so their identities exist.
// mode: write
// params: $ns, $rows
UNWIND $rows AS row
CREATE (:Artifact:Head:Live {vid: row.vid, key: row.key, ns: $ns, uid: row.uid,
        version: row.version, kind: row.kind, arch: row.arch, content: row.content,
        value: row.value, repair_cost: row.repair_cost, recipe: row.recipe, meta: row.meta,
        inputs: row.inputs, reads: row.reads, created_at: datetime()})
CREATE (n:Identity {key: row.key, ns: $ns, uid: row.uid})
WITH n, row
UNWIND row.input_keys AS k
MATCH (i:Identity {key: k})
CREATE (i)-[:INFLUENCES]->(n)
RETURN count(*) AS edges
