// Candidate and selection facts on each WITHDREW edge, so audits can ask why an
// artifact was or was not repaired, and a resumed run can reuse the selection.
// Rows carry the edge's element id from candidates/cascade_nodes (read in this run);
// the edge must still leave this event, or the row is skipped.
// mode: write
// params: $event_key, $rows
MATCH (e:RepairEvent {key: $event_key})
UNWIND $rows AS row
MATCH ()-[w:WITHDREW]->()
WHERE elementId(w) = row.withdrew AND startNode(w) = e
SET w.mode = row.mode, w.executable = row.executable, w.reason = row.reason,
    w.value = row.value, w.cost = row.cost, w.requires = row.requires,
    w.selected = row.selected
