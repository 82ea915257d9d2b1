// Full artifact versions by vid: the exact input versions a repaired artifact was built
// from that are neither in the cascade being repaired nor current heads (those are read
// already), e.g. a replaced root's old version. One record holding the list.
// mode: read
// params: $vids
UNWIND $vids AS v
MATCH (a:Artifact {vid: v})
RETURN collect({
         artifact: a {.uid, .version, .ns, .kind, .arch, .content, .value, .repair_cost,
                      .recipe, .meta, .inputs},
         visibility: coalesce([l IN labels(a)
                               WHERE l IN ['Live', 'Withdrawn', 'Staged', 'Superseded',
                                           'Removed']][0], 'Withdrawn')
       }) AS rows
