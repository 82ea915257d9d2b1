// Who was served each version an event withdrew: per version, principal and session the
// reads and the first and last read's time (epoch seconds), most read first. A withdrawn
// version is never served again, so every record of it is of a read before the barrier.
// Browser: :param ns => 'default'; :param event => 'evt-1'
// mode: read
// params: $ns, $event
MATCH (e:RepairEvent {key: $ns + '/' + $event})-[w:WITHDREW]->(d:Artifact)
MATCH (x:Exposure {vid: d.vid})
RETURN d.uid AS uid, d.version AS version, coalesce(w.outcome, 'open') AS outcome,
       coalesce(w.root, false) AS root,
       toString(coalesce(d.published_at, d.created_at)) AS published_at,
       x.principal AS principal, x.session AS session, x.count AS reads,
       x.first_at AS first_at, x.last_at AS last_at
ORDER BY reads DESC, uid, version, principal, session
