// For versions a writer pinned that are no longer served: the event that superseded one
// (published its successor, or replaced a root), else the event that withdrew or removed
// it, else the event that staged it (a discarded attempt). A new artifact derived from
// such a version is recorded withdrawn and joins that event's audit.
// mode: read
// params: $vids
UNWIND $vids AS v
MATCH (old:Artifact {vid: v})
OPTIONAL MATCH (p:RepairEvent)-[:PUBLISHED]->(:Artifact)-[:SUPERSEDES]->(old)
OPTIONAL MATCH (w:RepairEvent)-[:WITHDREW]->(old)
OPTIONAL MATCH (s:RepairEvent)-[:STAGED]->(old)
RETURN v AS vid, coalesce(p.key, w.key, s.key, old.held_by) AS event
