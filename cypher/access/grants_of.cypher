// The grants one principal holds: each a namespace pattern (exact name, `prefix*` or
// `*`) and its roles. The access check reads this before every operation of a
// principal other than the owner (access.py).
// Browser: :param principal => 'agent-7'
// mode: read
// params: $principal
MATCH (:Principal {name: $principal})-[:HOLDS]->(g:Grant)
RETURN g.pattern AS pattern, g.roles AS roles
