// One event's withdrawn cascade as a graph, for `memorepair show`: every node it withdrew
// with its outcome and candidate facts, the content it held and its successor's (the
// published one, or the staged attempt a failure left), and the nodes of the same
// cascade it was derived from (the drawing's edges). A content the graph no longer holds
// (redacted by an erasing event, `erasure.py`) comes back null, with `erased_by`.
// Browser: :param ns => 'default'; :param event => 'evt-1'
// mode: read
// params: $ns, $event
MATCH (e:RepairEvent {key: $ns + '/' + $event})-[w:WITHDREW]->(d:Artifact)
CALL (e, d) {
  OPTIONAL MATCH (e)-[:PUBLISHED|STAGED]->(s:Artifact)-[:SUPERSEDES]->(d)
  RETURN s ORDER BY s.version DESC LIMIT 1
}
RETURN d.uid AS uid, d.version AS version, d.kind AS kind, d.arch AS arch,
       coalesce(w.root, false) AS root, coalesce(w.outcome, 'open') AS outcome,
       w.mode AS mode, w.value AS value, w.cost AS cost, w.selected AS selected,
       coalesce(w.detail, w.reason) AS reason,
       d.content AS content, d.content IS NULL AS erased, d.erased_by AS erased_by,
       CASE WHEN s IS NULL THEN null
            ELSE {version: s.version, content: s.content, erased: s.content IS NULL,
                  erased_by: s.erased_by,
                  published: EXISTS { (e)-[:PUBLISHED]->(s) },
                  validation: s.validation} END AS successor,
       COLLECT { MATCH (p:Artifact)-[:INFLUENCES]->(d)
                 WHERE EXISTS { (e)-[:WITHDREW]->(p) }
                 RETURN DISTINCT p.uid } AS inputs
ORDER BY uid
