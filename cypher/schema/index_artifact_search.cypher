// Full-text (Lucene BM25, English analyzer) over the current version of each artifact
// (`Head`, which withdrawal never touches): its content and the searchable meta terms
// (`meta_terms`, the `key=value` of the fields MEMOREPAIR_SEARCH_META_FIELDS names), plus
// `ns` and `kind`, so a search filters by namespace, kind and meta inside Lucene before
// ranking. Served-ness (`Live`) and the exact filter values are checked by the queries.
// Eventually consistent: Lucene is updated just after each commit, not inside it (a
// synchronous update was two thirds of a `record`'s commit); every query of this index
// first awaits the pending updates, so a search still sees every committed write.
// mode: write
// params:
CREATE FULLTEXT INDEX artifact_search IF NOT EXISTS
FOR (a:Head) ON EACH [a.content, a.meta_terms, a.ns, a.kind]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'english', `fulltext.eventually_consistent`: true}}
