// Lean engine (bench only, bench/audit_share.py): publication/publish_fresh with only what
// the write floor writes per successor: the new current version (Head, Live) in its
// predecessor's place, kept as Superseded, its SUPERSEDES edge and its influence edges
// from the inputs it used. Dropped: the PUBLISHED edge, the predecessor's WITHDREW
// outcome, the RELATED edges, and the successor's audit properties (event, publication
// time, verdict, operator, measured work, meta terms, embedding model). Not a correct
// repair: it shows what the audit record costs. Same parameters as the engine's.
// mode: write
// params: $event_key, $rows, $deferred
WITH $event_key AS unused_key, $deferred AS unused_deferred
UNWIND $rows AS row
OPTIONAL MATCH (existing:Artifact {vid: row.vid})
WITH row, existing
WHERE existing IS NULL
MATCH (old:Artifact {vid: row.old_vid})
REMOVE old:Head, old:Withdrawn, old:Live
SET old:Superseded
CREATE (new:Artifact:Head:Live {vid: row.vid, key: old.key, ns: old.ns, uid: old.uid,
        version: row.version, kind: old.kind, arch: old.arch, value: old.value,
        repair_cost: old.repair_cost, created_at: datetime(), content: row.content,
        recipe: row.recipe, meta: row.meta, inputs: row.inputs})
CREATE (new)-[:SUPERSEDES]->(old)
WITH new, row
CALL (new, row) {
  UNWIND row.edges AS input
  MATCH (i:Head {key: input[1]})
  WHERE i:Live
  CREATE (i)-[:INFLUENCES {pos: input[0]}]->(new)
  RETURN count(*) AS edges
}
RETURN count(new) AS published, sum(edges) AS edges
