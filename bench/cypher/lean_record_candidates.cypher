// Lean engine (bench only, bench/audit_share.py): cascade/record_candidates with only what
// the write floor writes per descendant, its WITHDREW edge, plus the selection a resumed
// run reads back. Dropped: the candidate facts (mode, executability, reason, value, cost,
// their sources, requirements). Not a correct repair: it shows what the audit record
// costs. A fresh event only (its descendants have no WITHDREW edge yet). Same parameters
// as the engine's.
// mode: write
// params: $event_key, $rows
MATCH (e:RepairEvent {key: $event_key})
UNWIND $rows AS row
MATCH (d:Artifact {vid: row.vid})
CREATE (e)-[w:WITHDREW]->(d)
SET w.at = coalesce(e.withdrawn_at, datetime()), w.root = false, w.selected = row.selected
