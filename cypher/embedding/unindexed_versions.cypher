// Versions of a namespace a killed process left without their deferred embedding (still
// served, no vector, not erased), and superseded versions still holding one (the writer
// moves or drops those just after publication): what `resume` queues again. `reuse`: the
// content is the superseded predecessor's, whose vector can be copied; `meta`: the caller
// skips versions never embedded (`memorepair_embed: false`). A scan of the
// namespace's versions: `resume` runs it once, after the events it completes.
// mode: read
// params: $ns
MATCH (a:Artifact {ns: $ns})
WHERE (a:Live AND a.embedding IS NULL AND a.erased_by IS NULL AND a.content <> '')
   OR (a:Superseded AND a.embedding IS NOT NULL)
OPTIONAL MATCH (a)-[:SUPERSEDES]->(old:Superseded)
OPTIONAL MATCH (next:Artifact)-[:SUPERSEDES]->(a)
WITH CASE WHEN a:Live THEN a ELSE next END AS new, CASE WHEN a:Live THEN old ELSE a END AS old
WHERE new IS NOT NULL
RETURN collect(DISTINCT {vid: new.vid, content: new.content,
                         reuse: old IS NOT NULL AND old.content = new.content, meta: new.meta}) AS rows
