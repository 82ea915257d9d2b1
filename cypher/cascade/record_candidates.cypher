// Candidate and selection facts on each WITHDREW edge, so audits can ask why an
// artifact was or was not repaired, and a resumed run can reuse the selection. This is
// where the descendants' WITHDREW edges are created (at = the barrier's time): rows with
// `withdrew` (an edge's element id, read in this run) update that edge; rows without
// one MERGE it, so a rerun after a crash in the middle writes each edge once.
// mode: write
// params: $event_key, $rows
MATCH (e:RepairEvent {key: $event_key})
UNWIND $rows AS row
CALL (e, row) {
  WITH e, row WHERE row.withdrew IS NOT NULL
  MATCH ()-[w:WITHDREW]->()
  WHERE elementId(w) = row.withdrew AND startNode(w) = e
  RETURN w
  UNION ALL
  WITH e, row WHERE row.withdrew IS NULL
  MATCH (d:Artifact {vid: row.vid})
  MERGE (e)-[w:WITHDREW]->(d)
  ON CREATE SET w.at = coalesce(e.withdrawn_at, datetime()), w.root = false
  RETURN w
}
SET w.mode = row.mode, w.executable = row.executable, w.reason = row.reason,
    w.value = row.value, w.cost = row.cost, w.requires = row.requires,
    w.value_source = row.value_source, w.cost_source = row.cost_source,
    w.selected = row.selected
