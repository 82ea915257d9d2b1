// The event's withdrawn cascade with what the mode map needs (no contents: they are
// read later, only for the candidates that are selected). Late arrivals are audited,
// not repaired.
// mode: read
// params: $event_key
MATCH (e:RepairEvent {key: $event_key})-[w:WITHDREW]->(d:Artifact)
WHERE coalesce(w.outcome, '') <> 'late_arrival'
RETURN d.vid AS vid, d.uid AS uid, d.version AS version, d.kind AS kind, d.arch AS arch,
       d.value AS value, d.repair_cost AS repair_cost, d.recipe AS recipe,
       d.inputs AS inputs, w.root AS root, w.mode AS mode, w.selected AS selected,
       w.executable AS executable, w.reason AS reason
