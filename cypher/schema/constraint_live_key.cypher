// At most one served version per artifact: publishing twice cannot make two live.
// mode: write
// params:
CREATE CONSTRAINT live_key IF NOT EXISTS FOR (a:Live) REQUIRE a.key IS UNIQUE
