// The text of a page of a namespace's served versions (content and meta), in vid order
// after $after: which phrases of a text to erase other served memory says too (a shared
// template or sentence is not the erased text's own, so it is not fingerprinted).
// mode: read
// params: $ns, $after, $limit
MATCH (n:Artifact {ns: $ns})
WHERE n.vid > $after AND n:Live
WITH n ORDER BY n.vid LIMIT $limit
RETURN n.vid AS id, n.uid AS uid, n.content AS content, n.meta AS meta
ORDER BY id
