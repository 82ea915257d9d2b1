// The namespace's recent measured repair seconds per operator and kind (values.py): the
// running median prices a candidate whose artifact no repair has built yet.
// mode: read
// params: $ns
MATCH (w:WorkStat {ns: $ns})
RETURN collect({operator: w.operator, kind: w.kind, samples: w.samples, count: w.count})
       AS stats
