// Current versions that are not served, with the event and reason that keep them out
// (event null for the moment between a barrier and its hold step).
// Browser: :param ns => 'default'
// mode: read
// params: $ns
MATCH (d:Head {ns: $ns})
WHERE NOT d:Live AND NOT d:Removed
OPTIONAL MATCH (e:RepairEvent {key: d.held_by})-[w:WITHDREW]->(d)
RETURN d.uid AS uid, d.version AS version, d.kind AS kind, e.id AS event,
       e.status AS event_status, coalesce(w.outcome, 'open') AS outcome,
       coalesce(w.detail, w.reason) AS reason
ORDER BY d.uid
