// The barrier invariant as a query: live artifacts with support that is not live, and
// live versions that are not their uid's current one (an old version still served; with
// `head_key`, this is also what keeps a uid from being served twice).
// It must always return nothing; tests and `memorepair audit check` run it.
// Browser: :param ns => 'default'
// mode: read
// params: $ns
MATCH (p:Artifact)-[:INFLUENCES]->(a:Live {ns: $ns})
WHERE NOT p:Live
RETURN a.uid AS uid, a.version AS version, p.uid AS support, p.version AS support_version,
       [l IN labels(p) WHERE l IN ['Withdrawn', 'Staged', 'Superseded', 'Removed']][0]
         AS support_visibility
UNION ALL
MATCH (a:Live {ns: $ns})
WHERE NOT a:Head
RETURN a.uid AS uid, a.version AS version, null AS support, null AS support_version,
       'not the current version' AS support_visibility
