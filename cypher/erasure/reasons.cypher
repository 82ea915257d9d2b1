// The reasons recorded on the audit edges into erased versions (an operator's error may
// quote the text it refused).
// mode: read
// params: $vids
UNWIND $vids AS v
MATCH (:RepairEvent)-[w:WITHDREW]->(:Artifact {vid: v})
WHERE w.reason IS NOT NULL OR w.detail IS NOT NULL
RETURN elementId(w) AS id, w.reason AS reason, w.detail AS detail
