// Lock the input versions a write derives from (as the erasure's redaction locks them
// when it sets `erased_by`), then read for each whether it is erased, and which versions
// of the given roots (those of erasing events still open) it descends from over
// INFLUENCES, itself included, with the events that published each (an event's own
// replacement is not erased text).
// mode: write
// params: $vids, $root_keys
UNWIND $vids AS v
MATCH (i:Artifact {vid: v})
SET i._lock = true
REMOVE i._lock
WITH i
CALL (i) {
  WITH i WHERE $root_keys <> []
  MATCH (r:Artifact)-[:INFLUENCES*0..]->(i)
  WITH DISTINCT r
  WHERE r.key IN $root_keys
  RETURN collect({key: r.key, published_by: [(p:RepairEvent)-[:PUBLISHED]->(r) | p.key]})
         AS roots
}
RETURN i.vid AS vid, i.erased_by AS erased_by, coalesce(roots, []) AS roots
