// The common rows of a batch, without `create_artifacts`' per-row subqueries: fresh
// versions served at once (every input served), with no embedding to set in this
// transaction (it is deferred, or embeddings are off), and their influence edges from
// the exact input versions (`input_vids`).
// mode: write
// params: $ns, $rows
UNWIND $rows AS row
CREATE (a:Artifact:Head:Live {vid: row.vid, key: row.key, ns: $ns, uid: row.uid,
        version: row.version, kind: row.kind, arch: row.arch, content: row.content,
        value: row.value, repair_cost: row.repair_cost, recipe: row.recipe, meta: row.meta,
        inputs: row.inputs, created_at: datetime(), meta_terms: row.meta_terms, by: row.by})
WITH a, row
UNWIND range(0, size(row.input_vids) - 1) AS pos
MATCH (i:Artifact {vid: row.input_vids[pos]})
CREATE (i)-[:INFLUENCES {pos: pos}]->(a)
