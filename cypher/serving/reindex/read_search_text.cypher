// The content and meta of the given versions, which `reindex` embeds again.
// mode: read
// params: $vids
UNWIND $vids AS vid
MATCH (a:Artifact {vid: vid})
RETURN a.vid AS vid, a.content AS content, a.meta AS meta
