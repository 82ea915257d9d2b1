// Whether the database carries the full-text index of earlier builds, updated inside
// each commit (`apply_schema` drops it so the eventually consistent one replaces it).
// mode: read
// params:
SHOW FULLTEXT INDEXES YIELD name, options
WHERE name = 'artifact_search'
  AND coalesce(options.indexConfig.`fulltext.eventually_consistent`, false) = false
RETURN count(*) > 0 AS synchronous
