// The event's withdrawn cascade with what the mode map needs (no contents: they are
// read later, only for the candidates that are selected). Late arrivals are audited,
// not repaired. `withdrew` (the WITHDREW edge's element id) lets the candidate facts be
// written back without looking the edge up again. One record holding the list: per-record overhead in the driver was most
// of this read's time on large cascades.
// mode: read
// params: $event_key
MATCH (e:RepairEvent {key: $event_key})-[w:WITHDREW]->(d:Artifact)
WHERE coalesce(w.outcome, '') <> 'late_arrival'
RETURN collect({withdrew: elementId(w), vid: d.vid, uid: d.uid, version: d.version, kind: d.kind, arch: d.arch,
                value: d.value, repair_cost: d.repair_cost, recipe: d.recipe,
                inputs: d.inputs, root: w.root, mode: w.mode, selected: w.selected,
                executable: w.executable, reason: w.reason}) AS rows
