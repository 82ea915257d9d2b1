// Write floor (bench only): the event node the cascade's WITHDREW edges hang from; it
// lives in the namespace, so clearing the namespace removes it.
// mode: write
// params: $key, $ns, $id
CREATE (e:RepairEvent {key: $key, ns: $ns, id: $id, type: 'bench_floor', status: 'completed'})
RETURN e.key AS key
