// Identity model (bench only): the counterpart of audit/lineage: every version of one
// artifact, oldest first, with the inputs it was built from, found by the versions it
// records in `reads` (aligned with `inputs`; a read that names no version shows as
// 'missing <vid>'), and the events that withdrew (none: an empty list) or published it.
// A version counts as erased when its text is gone or a replay marked it (`erased_by`).
// mode: read
// params: $ns, $uid
MATCH (a:Artifact {key: $ns + '/' + $uid})
CALL (a) {
  UNWIND range(0, size(coalesce(a.reads, [])) - 1) AS k
  WITH a.ns + '/' + a.inputs[k] + '@' + toString(a.reads[k]) AS r
  OPTIONAL MATCH (i:Artifact {vid: r})
  RETURN collect(coalesce(i.uid + '@' + toString(i.version), 'missing ' + r)) AS inputs
}
OPTIONAL MATCH (e:RepairEvent)-[w:WITHDREW]->(a)
WITH a, inputs,
     collect(CASE WHEN e IS NOT NULL
                  THEN {event: e.id, outcome: w.outcome, mode: w.mode} END) AS withdrawn_by
OPTIONAL MATCH (p:RepairEvent)-[:PUBLISHED]->(a)
RETURN a.version AS version,
       coalesce([l IN labels(a)
                 WHERE l IN ['Live', 'Withdrawn', 'Staged', 'Superseded', 'Removed']][0],
                'Withdrawn') AS visibility,
       a.kind AS kind, inputs, withdrawn_by, p.id AS published_by,
       a.content IS NULL OR a.erased_by IS NOT NULL AS erased
ORDER BY a.version
