// `record` in one statement: claim the namespace's embedding space (or mark it stale
// with embeddings off), refuse an existing uid, lock the current versions of the inputs
// (as `lock_heads` does, so the barrier and this writer order on the same locks), then
// create the artifact, served only if every input is served now, with influence edges
// from those versions. Only the common case is decided here: with an unknown or deleted
// input, a pin to a version that is not current, or another embedding space, nothing is
// created (`created` false) and the caller refuses or takes the general path
// (`create_artifacts`) in the same transaction.
// mode: write
// params: $ns, $row, $model, $dimension
CALL () {
  WITH 1 AS one WHERE $model IS NOT NULL
  MERGE (s:EmbeddingSpace {ns: $ns})
  ON CREATE SET s.model = $model, s.dimension = $dimension, s.state = 'ready',
                s.updated_at = datetime()
}
CALL () {
  WITH 1 AS one WHERE $model IS NULL
  MATCH (s:EmbeddingSpace {ns: $ns})
  SET s.state = 'stale', s.updated_at = datetime()
}
OPTIONAL MATCH (space:EmbeddingSpace {ns: $ns})
OPTIONAL MATCH (old:Head {key: $row.key})
CALL () {
  UNWIND range(0, size($row.input_keys) - 1) AS pos
  OPTIONAL MATCH (h:Head {key: $row.input_keys[pos]})
  SET h._lock = true
  REMOVE h._lock
  RETURN collect({pos: pos, node: h, version: h.version, live: h:Live, removed: h:Removed,
                  held_by: h.held_by, pin: $row.input_pins[pos]}) AS inputs
}
WITH space, old, inputs,
     [i IN inputs WHERE i.node IS NULL OR (i.removed AND i.pin IS NULL) | i.pos] AS missing,
     [i IN inputs WHERE NOT i.live | i.held_by] AS holders
WITH space, old, inputs, missing, holders,
     old IS NULL AND missing = []
     AND all(i IN inputs WHERE i.pin IS NULL OR (i.pin = i.version AND NOT i.removed))
     AND ($model IS NULL OR (space.model = $model AND space.dimension = $dimension)) AS ok,
     holders = [] AS live
OPTIONAL CALL (ok, live, holders, inputs) {
  WITH ok, live, holders, inputs WHERE ok
  CREATE (a:Artifact:Head {vid: $row.vid, key: $row.key, ns: $ns, uid: $row.uid,
          version: 1, kind: $row.kind, arch: $row.arch, content: $row.content,
          value: $row.value, repair_cost: $row.repair_cost, recipe: $row.recipe,
          meta: $row.meta, inputs: $row.inputs, created_at: datetime(), by: $row.by,
          meta_terms: $row.meta_terms,
          embedding_model: CASE WHEN live THEN $row.embedding_model END,
          embedding_dim: CASE WHEN live THEN $row.embedding_dim END})
  WITH a, live, holders, inputs,
       head([h IN holders WHERE h IS NOT NULL]) AS held_by
  FOREACH (_ IN CASE WHEN live THEN [1] ELSE [] END | SET a:Live)
  FOREACH (_ IN CASE WHEN live THEN [] ELSE [1] END |
    SET a:Withdrawn, a.held_by = held_by, a.outcome = 'late_arrival')
  WITH a, live, held_by, inputs
  CALL (a, live) {
    WITH a, live WHERE live AND $row.embedding IS NOT NULL
    CALL db.create.setNodeVectorProperty(a, 'embedding', $row.embedding)
  }
  CALL (a, held_by) {
    WITH a, held_by WHERE held_by IS NOT NULL
    MATCH (e:RepairEvent {key: held_by})
    MERGE (e)-[w:WITHDREW]->(a)
    ON CREATE SET w.at = datetime(), w.root = false, w.outcome = 'late_arrival'
  }
  CALL (a, inputs) {
    UNWIND inputs AS i
    WITH a, i, i.node AS input
    CREATE (input)-[:INFLUENCES {pos: i.pos}]->(a)
  }
  RETURN live AS served, held_by AS holder
}
RETURN ok AS created, old IS NOT NULL AS exists, old:Removed AS deleted, missing,
       space.model AS model, space.dimension AS dimension, served AS live, holder AS held_by
