// The event's withdrawn cascade with what the mode map needs (no contents: they are
// read later, only for the candidates that are selected): the nodes it holds whose
// WITHDREW edge is not written yet (the hold step only marks `held_by`), and those with
// an edge (replaced roots, and every node once the candidate facts are recorded), whose
// facts a resumed run reuses. Late arrivals are audited, not repaired. `withdrew` (the
// edge's element id, or null) lets the facts be written back without a lookup. One
// record holding the list: per-record overhead in the driver dominated large reads.
// `work_s`: the measured seconds of the last repair that built a version of the uid
// (the current version's own, or an earlier one's when a write replaced it since).
// mode: read
// params: $event_key, $keys
MATCH (e:RepairEvent {key: $event_key})
CALL (e) {
  MATCH (e)-[w:WITHDREW]->(d:Artifact)
  WHERE coalesce(w.outcome, '') <> 'late_arrival'
  RETURN d, w
  UNION ALL
  MATCH (d:Withdrawn {held_by: $event_key})
  WHERE NOT EXISTS { (e)-[:WITHDREW]->(d) }
  RETURN d, null AS w
}
RETURN collect({withdrew: elementId(w), vid: d.vid, uid: d.uid, version: d.version,
                kind: d.kind, arch: d.arch, value: d.value, repair_cost: d.repair_cost,
                recipe: d.recipe, inputs: d.inputs, root: d.key IN $keys, mode: w.mode,
                created: d.created_at.epochMillis / 1000.0,
                work_s: CASE WHEN d.work_s IS NULL AND d.version > 1
                        THEN head(COLLECT { MATCH (p:Artifact {key: d.key})
                                            WHERE p.work_s IS NOT NULL AND p.version < d.version
                                            RETURN p.work_s ORDER BY p.version DESC LIMIT 1 })
                        ELSE d.work_s END,
                selected: w.selected, executable: w.executable, reason: w.reason}) AS rows
