// The full-text index's own answer, as a floor for search's text mode: the same Lucene
// query text, its $k best, no served-ness check.
// mode: read
// params: $lucene, $k
CALL db.index.fulltext.queryNodes('artifact_search', $lucene, {limit: $k}) YIELD node, score
RETURN node.uid AS uid, score
