// Every version of one artifact, oldest first: visibility, the inputs it was built from,
// the events that withdrew (none: an empty list), staged or published it, and who made it (the principal that
// recorded it, or that asked for the event that published it).
// Browser: :param ns => 'default'; :param uid => 'summary-trip'
// mode: read
// params: $ns, $uid
MATCH (a:Artifact {key: $ns + '/' + $uid})
WHERE NOT a:Importing
OPTIONAL MATCH (i)-[:INFLUENCES]->(a)
WITH a, collect(i.uid + '@' + toString(i.version)) AS inputs
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
       coalesce(a.by, p.by) AS by, toString(a.created_at) AS created_at,
       a.content IS NULL AS erased
ORDER BY a.version
