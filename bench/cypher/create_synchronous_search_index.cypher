// The full-text index as builds before issue 20 created it: updated inside each commit.
// The schema migration test creates it to check that `apply_schema` replaces it.
// mode: write
// params:
CREATE FULLTEXT INDEX artifact_search IF NOT EXISTS
FOR (a:Head) ON EACH [a.content, a.meta_terms, a.ns, a.kind]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'english'}}
