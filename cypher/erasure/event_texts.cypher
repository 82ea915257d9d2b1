// Every event's free text in a namespace: its reason and stored spec.
// mode: read
// params: $ns
MATCH (e:RepairEvent {ns: $ns})
RETURN e.key AS key, e.reason AS reason, e.spec AS spec
