// The vector index's own answer, as a floor for search's vector mode: its $k nearest
// versions of any namespace, no filter, no served-ness check.
// mode: read
// params: $k, $vector
CALL db.index.vector.queryNodes('artifact_embedding', $k, $vector) YIELD node, score
RETURN node.uid AS uid, score
