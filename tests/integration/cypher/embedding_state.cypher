// Tests only: every version of a namespace with its visibility and its vector (null:
// none), in uid and version order.
// mode: read
// params: $ns
MATCH (a:Artifact {ns: $ns})
RETURN a.uid AS uid, a.version AS version,
       coalesce([l IN labels(a) WHERE l IN ['Live', 'Withdrawn', 'Staged', 'Superseded',
                                            'Removed']][0], 'Withdrawn') AS visibility,
       a.embedding AS embedding
ORDER BY uid, version
