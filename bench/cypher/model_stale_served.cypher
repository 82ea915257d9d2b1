// Identity model (bench only): the barrier invariant, the counterpart of
// audit/stale_served: live versions that read a version which is not live (or names no
// version), and live versions that are not their uid's current one. Must return nothing.
// mode: read
// params: $ns
MATCH (a:Live {ns: $ns})
UNWIND range(0, size(coalesce(a.reads, [])) - 1) AS k
WITH a, $ns + '/' + a.inputs[k] + '@' + toString(a.reads[k]) AS r
OPTIONAL MATCH (p:Artifact {vid: r})
WITH a, r, p
WHERE p IS NULL OR NOT p:Live
RETURN a.uid AS uid, a.version AS version, coalesce(p.uid, r) AS support,
       p.version AS support_version,
       CASE WHEN p IS NULL THEN 'missing'
            ELSE [l IN labels(p) WHERE l IN ['Withdrawn', 'Staged', 'Superseded', 'Removed']][0]
       END AS support_visibility
UNION ALL
MATCH (a:Live {ns: $ns})
WHERE NOT a:Head
RETURN a.uid AS uid, a.version AS version, null AS support, null AS support_version,
       'not the current version' AS support_visibility
