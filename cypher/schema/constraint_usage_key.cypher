// One usage record per artifact identity (ns/uid): use recording MERGEs on it.
// mode: write
// params:
CREATE CONSTRAINT usage_key IF NOT EXISTS FOR (u:Usage) REQUIRE u.key IS UNIQUE
