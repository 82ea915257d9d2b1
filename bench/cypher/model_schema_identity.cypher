// Identity model (bench only, issue 20): one Identity node per uid, unique by key, so a
// version finds its identity (and a reach its start) by an index seek.
// mode: write
// params:
CREATE CONSTRAINT model_identity_key IF NOT EXISTS FOR (n:Identity) REQUIRE n.key IS UNIQUE
