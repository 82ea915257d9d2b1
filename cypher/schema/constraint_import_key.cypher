// One import record per (namespace, import id): a re-run of the same input finds its own.
// mode: write
// params:
CREATE CONSTRAINT import_key IF NOT EXISTS FOR (i:Import) REQUIRE i.key IS UNIQUE
