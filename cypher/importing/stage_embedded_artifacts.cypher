// `stage_artifacts` for rows that carry their embedding (MEMOREPAIR_RECORD_EMBEDDING=inline).
// mode: write
// params: $ns, $key, $rows
UNWIND $rows AS row
CREATE (a:Artifact:Importing {vid: row.vid, key: row.key, ns: $ns, uid: row.uid,
        version: row.version, kind: row.kind, arch: row.arch, content: row.content,
        value: row.value, repair_cost: row.repair_cost, recipe: row.recipe, meta: row.meta,
        inputs: row.inputs, created_at: datetime(), meta_terms: row.meta_terms, by: row.by,
        import_key: $key, embedding_model: row.embedding_model,
        embedding_dim: row.embedding_dim})
WITH a, row
CALL (a, row) {
  WITH a, row WHERE row.embedding IS NOT NULL
  CALL db.create.setNodeVectorProperty(a, 'embedding', row.embedding)
}
WITH a, row
UNWIND range(0, size(row.input_vids) - 1) AS pos
MATCH (i:Artifact {vid: row.input_vids[pos]})
CREATE (i)-[:INFLUENCES {pos: pos}]->(a)
