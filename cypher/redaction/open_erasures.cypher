// The events of a namespace that have not completed, with their roots' keys: a write
// derived from a pre-event version of the roots of one that erases (a delete, or a
// correct with erase: the caller reads that from type and spec) is redacted.
// mode: read
// params: $ns
MATCH (e:RepairEvent {ns: $ns})
WHERE NOT e.status IN ['completed', 'failed', 'skipped']
RETURN e.key AS key, e.type AS type, e.spec AS spec,
       [r IN coalesce(e.roots, []) | $ns + '/' + r] AS root_keys
