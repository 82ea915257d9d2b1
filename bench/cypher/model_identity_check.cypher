// Identity model (bench only): the identity graph says exactly what the current versions
// read, which the barrier relies on (it follows identity edges, not `reads`). For every
// current version: its identity exists, INFLUENCES comes from exactly the inputs whose
// current version it reads, INFLUENCED from exactly those whose older version it reads;
// and every identity has a current version. Must return nothing.
// mode: read
// params: $ns
MATCH (a:Head {ns: $ns})
OPTIONAL MATCH (n:Identity {key: a.key})
CALL (a) {
  UNWIND range(0, size(coalesce(a.reads, [])) - 1) AS k
  OPTIONAL MATCH (p:Artifact {vid: a.ns + '/' + a.inputs[k] + '@' + toString(a.reads[k])})
  OPTIONAL MATCH (h:Head {key: p.key})
  RETURN collect(CASE WHEN p.vid = h.vid THEN p.key END) AS current,
         collect(CASE WHEN p.vid <> h.vid THEN p.key END) AS behind,
         count(p) AS found
}
WITH a, n, current, behind, found = size(coalesce(a.reads, [])) AS resolved,
     [(i:Identity)-[:INFLUENCES]->(n) | i.key] AS follows,
     [(i:Identity)-[:INFLUENCED]->(n) | i.key] AS trails
WHERE n IS NULL OR NOT resolved
   OR size(follows) <> size(current) OR any(k IN current WHERE NOT k IN follows)
   OR size(trails) <> size(behind) OR any(k IN behind WHERE NOT k IN trails)
RETURN a.uid AS uid, a.version AS version, current, behind, follows, trails,
       n IS NOT NULL AS identity
UNION ALL
MATCH (n:Identity {ns: $ns})
WHERE NOT EXISTS { MATCH (:Head {key: n.key}) }
RETURN n.uid AS uid, null AS version, [] AS current, [] AS behind, [] AS follows,
       [] AS trails, true AS identity
