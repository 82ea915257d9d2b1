// Replace audit-edge reasons that quote erased text (rows carry the scrubbed strings).
// mode: write
// params: $rows
UNWIND $rows AS row
MATCH ()-[w:WITHDREW]->()
WHERE elementId(w) = row.id
SET w.reason = row.reason, w.detail = row.detail
