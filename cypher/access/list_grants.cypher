// Every grant (or one principal's, when $principal is not null), with who granted it
// and when: what `memorepair grants show` prints.
// mode: read
// params: $principal
MATCH (p:Principal)-[:HOLDS]->(g:Grant)
WHERE $principal IS NULL OR p.name = $principal
RETURN p.name AS principal, g.pattern AS pattern, g.roles AS roles,
       g.granted_by AS granted_by, toString(g.granted_at) AS granted_at
ORDER BY principal, pattern
