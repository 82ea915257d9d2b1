// The barrier invariant as a query: live artifacts with support that is not live.
// It must always return nothing; tests and `memorepair audit check` run it.
// Browser: :param ns => 'default'
// mode: read
// params: $ns
MATCH (p:Artifact)-[:INFLUENCES]->(a:Live {ns: $ns})
WHERE NOT p:Live
RETURN a.uid AS uid, a.version AS version, p.uid AS support, p.version AS support_version,
       [l IN labels(p) WHERE l IN ['Withdrawn', 'Staged', 'Superseded', 'Removed']][0]
         AS support_visibility
