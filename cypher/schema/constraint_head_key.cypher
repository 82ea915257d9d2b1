// At most one current version (Head) per artifact: the database itself refuses a second.
// mode: write
// params:
CREATE CONSTRAINT head_key IF NOT EXISTS FOR (a:Head) REQUIRE a.key IS UNIQUE
