// The distinct '/'-separated paths above the served uids of the namespace that start with
// $prefix (a uid `a/b/key` lies under the path [a, b]): the LangGraph store's namespaces.
// mode: read
// params: $ns, $prefix
MATCH (a:Live:Artifact {ns: $ns})
WHERE a.uid STARTS WITH $prefix AND a.uid CONTAINS '/'
WITH split(a.uid, '/') AS parts
RETURN DISTINCT parts[0..size(parts) - 1] AS path
ORDER BY path
