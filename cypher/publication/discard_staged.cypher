// Staged successors that will not be published (failed, blocked, input withdrawn meanwhile)
// keep their node for audit but are marked, so no later run mistakes them for pending.
// mode: write
// params: $event_key, $vids, $reason
MATCH (e:RepairEvent {key: $event_key})-[:STAGED]->(new:Staged)
WHERE new.vid IN $vids
SET new.discarded = $reason
REMOVE new.embedding, new.embedding_model, new.embedding_dim
RETURN count(new) AS discarded
