// Erasure records: the versions an event redacted (audit/erasure.cypher).
// mode: write
// params:
CREATE INDEX artifact_erased_by IF NOT EXISTS FOR (a:Artifact) ON (a.erased_by)
