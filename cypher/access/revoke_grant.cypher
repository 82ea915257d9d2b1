// Take roles back from one grant ($roles null: all of them); a grant left without roles
// is deleted. Returns the roles the grant still holds (none when it is gone), or no row
// when there was no such grant.
// mode: write
// params: $key, $roles
MATCH (g:Grant {key: $key})
WITH g, [r IN g.roles WHERE $roles IS NOT NULL AND NOT r IN $roles] AS kept
SET g.roles = kept
WITH g, kept
CALL (g, kept) {
  WITH g WHERE kept = []
  DETACH DELETE g
}
RETURN kept AS roles
