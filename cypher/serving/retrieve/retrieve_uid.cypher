// The serving read of one artifact by uid: its live version, or nothing.
// mode: read
// params: $key
MATCH (a:Head {key: $key})
WHERE a:Live
RETURN a {.*, created_at: null, published_at: null, embedding: null} AS artifact, 'Live' AS visibility
