// Every text property (strings and lists of strings: the only values a copy of text can
// be) of a page of a namespace's artifact versions and of every relationship touching
// them (in vid order, after $after): what `audit erasure` scans for copies. Numbers,
// times and the embedding stay on the server; each property comes as [name, value].
// mode: read
// params: $ns, $after, $limit
MATCH (n:Artifact {ns: $ns})
WHERE n.vid > $after
WITH n ORDER BY n.vid LIMIT $limit
OPTIONAL MATCH (n)-[r]-()
WITH n, collect({id: elementId(r), type: type(r),
                 props: [k IN keys(r) WHERE r[k] IS :: STRING OR r[k] IS :: LIST<STRING>
                         | [k, r[k]]]}) AS rels
RETURN n.vid AS id, labels(n) AS labels,
       [k IN keys(n) WHERE n[k] IS :: STRING OR n[k] IS :: LIST<STRING> | [k, n[k]]] AS props,
       rels
ORDER BY id
