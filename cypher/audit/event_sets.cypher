// One event's withdrawn cascade, grouped by outcome: published, removed, failed,
// blocked, unselected, not_executable, root_deleted, root_replaced, late_arrival.
// Browser: :param ns => 'default'; :param event => 'evt-1'
// mode: read
// params: $ns, $event
MATCH (e:RepairEvent {key: $ns + '/' + $event})-[w:WITHDREW]->(d:Artifact)
OPTIONAL MATCH (e)-[:PUBLISHED]->(s:Artifact)-[:SUPERSEDES]->(d)
RETURN coalesce(w.outcome, 'open') AS outcome, count(d) AS count,
       collect({uid: d.uid, version: d.version, kind: d.kind, mode: w.mode,
                reason: coalesce(w.detail, w.reason), successor: s.version,
                value: w.value, value_source: w.value_source, cost: w.cost,
                cost_source: w.cost_source, work_s: s.work_s}) AS artifacts
ORDER BY outcome
