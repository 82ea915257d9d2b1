// Bench only: what an engine event did to each uid of its cascade in today's model (the
// outcome, whether it was a root, its successor's inputs, and whether it left a staged
// successor unpublished: failed or blocked), so the same event can be replayed on the
// identity model and the two audits compared.
// mode: read
// params: $key
MATCH (e:RepairEvent {key: $key})-[w:WITHDREW]->(d:Artifact)
OPTIONAL MATCH (e)-[:PUBLISHED]->(s:Artifact)-[:SUPERSEDES]->(d)
RETURN d.uid AS uid, w.outcome AS outcome, coalesce(w.root, false) AS root,
       s.inputs AS inputs,
       EXISTS { MATCH (e)-[:STAGED]->(t:Staged) WHERE t.key = d.key } AS staged
