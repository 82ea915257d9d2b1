// One exposure record per (version, principal, session): use recording MERGEs on it.
// mode: write
// params:
CREATE CONSTRAINT exposure_key IF NOT EXISTS FOR (x:Exposure) REQUIRE x.key IS UNIQUE
