// Version history of one artifact (lineage) without a label scan.
// mode: write
// params:
CREATE INDEX artifact_key IF NOT EXISTS FOR (a:Artifact) ON (a.key)
