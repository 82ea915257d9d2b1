// The fingerprints erasing events recorded (null until an event records them): what a
// redacted late write's meta and recipe are judged by.
// mode: read
// params: $keys
UNWIND $keys AS k
MATCH (e:RepairEvent {key: k})
RETURN e.key AS key, e.erasure_prints AS prints
