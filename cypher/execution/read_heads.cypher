// Full current versions by artifact key: the retained support of a successor. One record
// holding the list.
// mode: read
// params: $keys
UNWIND $keys AS k
MATCH (a:Head {key: k})
RETURN collect({
         artifact: a {.uid, .version, .ns, .kind, .arch, .content, .value, .repair_cost,
                      .recipe, .meta, .inputs},
         visibility: coalesce([l IN labels(a)
                               WHERE l IN ['Live', 'Withdrawn', 'Staged', 'Superseded',
                                           'Removed']][0], 'Withdrawn')
       }) AS rows
