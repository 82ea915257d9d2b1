// The hold step's fixpoint check (its locks now held): nodes reached from the event's
// roots that are out of serving with no holder recorded, i.e. late arrivals a writer
// committed while the hold statement ran.
// mode: read
// params: $event_key
MATCH (:RepairEvent {key: $event_key})-[:WITHDREW {root: true}]->(r:Artifact)
MATCH (r)-[:INFLUENCES*0..]->(d)
WITH DISTINCT d
WHERE d:Head AND NOT d:Live AND NOT d:Removed AND d.held_by IS NULL
RETURN count(d) AS unheld
