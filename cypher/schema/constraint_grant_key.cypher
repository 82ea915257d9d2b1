// One grant per (principal, namespace pattern): `grants set` MERGEs on it.
// mode: write
// params:
CREATE CONSTRAINT grant_key IF NOT EXISTS FOR (g:Grant) REQUIRE g.key IS UNIQUE
