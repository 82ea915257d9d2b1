// Identity model (bench only): the floor's read of a cascade, the counterpart of
// raw_cascade: each current version of C(F) with its content, its inputs and the
// versions it read, and the inputs whose edge is behind (INFLUENCED: the version read is
// no longer that input's current one), which a republish must look up and bring current.
// The input-first order comes from `inputs`, so no out-edges are read. Removed versions
// the reach passes through come too (flagged, never republished): an input republished
// now leaves them behind like any reader that keeps its old version.
// mode: read
// params: $keys
MATCH (r:Identity)-[:INFLUENCES*0..]->(n)
WHERE r.key IN $keys
WITH DISTINCT n
MATCH (d:Head {key: n.key})
RETURN d.vid AS vid, d.kind AS kind, d.content AS content, d.inputs AS inputs,
       d.reads AS reads, [(i:Identity)-[:INFLUENCED]->(n) | i.key] AS behind,
       d:Removed AS removed
