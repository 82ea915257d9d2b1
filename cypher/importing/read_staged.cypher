// Each staged version of an import with the state now of every input version it was
// derived from: served, in the import, withdrawn (and by which event), or no longer
// current (and the event that superseded, withdrew or staged it, as `stale_holders`).
// mode: read
// params: $key
MATCH (a:Importing)
WHERE a.import_key = $key
OPTIONAL MATCH (i:Artifact)-[r:INFLUENCES]->(a)
OPTIONAL MATCH (p:RepairEvent)-[:PUBLISHED]->(:Artifact)-[:SUPERSEDES]->(i)
OPTIONAL MATCH (w:RepairEvent)-[:WITHDREW]->(i)
OPTIONAL MATCH (s:RepairEvent)-[:STAGED]->(i)
WITH a, r, i, coalesce(p.key, w.key, s.key, i.held_by) AS holder
WITH a, collect(CASE WHEN i IS NOT NULL THEN
  {pos: r.pos, vid: i.vid, staged: i.import_key = $key AND i:Importing, live: i:Live,
   head: i:Head, removed: i:Removed, held_by: i.held_by, holder: holder} END) AS inputs
RETURN a.vid AS vid, a.uid AS uid, inputs
