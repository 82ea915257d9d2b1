// Serving reads by kind within a namespace.
// mode: write
// params:
CREATE INDEX artifact_ns_kind IF NOT EXISTS FOR (a:Artifact) ON (a.ns, a.kind)
