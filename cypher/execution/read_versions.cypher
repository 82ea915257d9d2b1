// Full artifact versions by vid (the withdrawn versions being repaired), each with the
// exact input versions it was built from (its INFLUENCES in-edges) and the highest
// version ever written for its uid (a successor takes the next number). One record
// holding the list. Properties by name: `.*` would read each version's embedding too,
// which made this read 2.4x as long on embedded memory.
// mode: read
// params: $vids
UNWIND $vids AS v
MATCH (a:Artifact {vid: v})
CALL (a) {
  MATCH (x:Artifact {key: a.key})
  RETURN max(x.version) AS latest
}
RETURN collect({
         artifact: a {.uid, .version, .ns, .kind, .arch, .content, .value, .repair_cost,
                      .recipe, .meta, .inputs},
         visibility: coalesce([l IN labels(a)
                               WHERE l IN ['Live', 'Withdrawn', 'Staged', 'Superseded',
                                           'Removed']][0], 'Withdrawn'),
         used: [(p:Artifact)-[r:INFLUENCES]->(a) | [r.pos, p.vid]],
         latest: latest}) AS rows
