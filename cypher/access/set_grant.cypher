// Give a principal exactly these roles on one namespace pattern (replacing the roles it
// held there), creating the principal's node on its first grant. Safe to run twice.
// mode: write
// params: $principal, $pattern, $key, $roles, $by
MERGE (p:Principal {name: $principal})
  ON CREATE SET p.added_at = datetime(), p.added_by = $by
MERGE (g:Grant {key: $key})
  ON CREATE SET g.principal = $principal, g.pattern = $pattern
SET g.roles = $roles, g.granted_by = $by, g.granted_at = datetime()
MERGE (p)-[:HOLDS]->(g)
RETURN g.pattern AS pattern, g.roles AS roles
