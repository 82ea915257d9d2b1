// One node per principal name: grants hang from it (access.py).
// mode: write
// params:
CREATE CONSTRAINT principal_name IF NOT EXISTS FOR (p:Principal) REQUIRE p.name IS UNIQUE
