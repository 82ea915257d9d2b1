// The namespace's embedding space (model, dimension, state), and whether it serves
// anything at all (a namespace with live versions and no space was never embedded).
// mode: read
// params: $ns
OPTIONAL MATCH (s:EmbeddingSpace {ns: $ns})
CALL () {
  OPTIONAL MATCH (a:Artifact {ns: $ns})
  WHERE a:Live
  WITH a LIMIT 1
  RETURN a IS NOT NULL AS serves
}
RETURN s.model AS model, s.dimension AS dimension, s.state AS state, serves
