// Write a batch of an import staged: first versions labelled Importing, never Head, so no
// serving read, search, cascade or barrier sees them until `publish_import` flips the whole
// import at once. Influence edges come from the exact input versions read (`input_vids`);
// `publish_import` decides each one's visibility from those versions' state at publication.
// mode: write
// params: $ns, $key, $rows
UNWIND $rows AS row
CREATE (a:Artifact:Importing {vid: row.vid, key: row.key, ns: $ns, uid: row.uid,
        version: row.version, kind: row.kind, arch: row.arch, content: row.content,
        value: row.value, repair_cost: row.repair_cost, recipe: row.recipe, meta: row.meta,
        inputs: row.inputs, created_at: datetime(), meta_terms: row.meta_terms, by: row.by,
        import_key: $key})
WITH a, row
UNWIND range(0, size(row.input_vids) - 1) AS pos
MATCH (i:Artifact {vid: row.input_vids[pos]})
CREATE (i)-[:INFLUENCES {pos: pos}]->(a)
