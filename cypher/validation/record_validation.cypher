// Record each staged successor's validation verdict (the content was staged before).
// mode: write
// params: $rows
UNWIND $rows AS row
MATCH (new:Artifact:Staged {vid: row.vid})
SET new.validated = row.validated, new.validation = row.validation
