// The text of a page of a namespace's served versions (content and meta), in vid order
// after $after: which phrases of a text to erase other served memory says too (a shared
// template or sentence is not the erased text's own, so it is not fingerprinted), and
// whether the artifact existed no later than the erased roots' first version ($first_at;
// its first version's time): an identifier it states cannot have been copied from them.
// mode: read
// params: $ns, $after, $limit, $first_at
MATCH (n:Artifact {ns: $ns})
WHERE n.vid > $after AND n:Live
WITH n ORDER BY n.vid LIMIT $limit
OPTIONAL MATCH (f:Artifact {vid: n.key + '@1'})
RETURN n.vid AS id, n.uid AS uid, n.content AS content, n.meta AS meta,
       coalesce(f.created_at <= $first_at, false) AS before_roots
ORDER BY id
