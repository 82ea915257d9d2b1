// The candidates an event selected (S), whatever became of them afterwards.
// Browser: :param ns => 'default'; :param event => 'evt-1'
// mode: read
// params: $ns, $event
MATCH (e:RepairEvent {key: $ns + '/' + $event})-[w:WITHDREW]->(d:Artifact)
WHERE w.selected
RETURN collect(d.uid) AS uids
