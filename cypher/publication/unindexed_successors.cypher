// The event's published successors whose vector the embedding writer has not written yet
// (still served, still without one, not erased), or whose superseded predecessor still
// holds its vector: what a process killed between publication and its last deferred
// embedding left undone. `reuse`: the content is the predecessor's, whose vector can be
// copied; `meta`: the caller skips versions never embedded (`memorepair_embed: false`).
// One record holding the list.
// mode: read
// params: $event_key
MATCH (:RepairEvent {key: $event_key})-[:PUBLISHED]->(new:Artifact)
OPTIONAL MATCH (new)-[:SUPERSEDES]->(old:Superseded)
WITH new, old
WHERE (new:Live AND new.embedding IS NULL AND new.erased_by IS NULL AND new.content <> '')
   OR old.embedding IS NOT NULL
RETURN collect({vid: new.vid, content: new.content,
                reuse: old IS NOT NULL AND old.content = new.content, meta: new.meta}) AS rows
