// The hold step, right after the barrier committed: this event becomes the recorded
// holder (`Withdrawn`, `held_by`) of every node its barrier took out of serving, and of
// the late arrivals derived from them since (given their WITHDREW edge, as
// store/create_artifacts does for late arrivals once the holder is recorded). Reached
// from the roots' WITHDREW edges: a replaced root's old version keeps its out-edges.
// Until this commits those nodes are not served but name no holder, so other barriers
// reaching them refuse. Safe to run twice.
// mode: write
// params: $event_key
MATCH (:RepairEvent {key: $event_key})-[:WITHDREW {root: true}]->(r:Artifact)
MATCH (r)-[:INFLUENCES*0..]->(d)
WITH DISTINCT d
WHERE d:Head AND NOT d:Live AND NOT d:Removed AND d.held_by IS NULL
SET d:Withdrawn, d.held_by = $event_key
WITH d
CALL (d) {
  WITH d WHERE d.outcome = 'late_arrival'
  MATCH (e:RepairEvent {key: $event_key})
  MERGE (e)-[w:WITHDREW]->(d)
  ON CREATE SET w.at = datetime(), w.root = false, w.outcome = 'late_arrival'
}
RETURN count(d) AS held
