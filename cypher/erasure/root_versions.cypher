// The texts an erasing event erases: every version of its roots from before the event
// (not the replacement it published), and the fingerprints already recorded, if any (a
// resumed erasure reuses them: the texts may be redacted by then).
// mode: read
// params: $event_key, $keys
MATCH (e:RepairEvent {key: $event_key})
OPTIONAL MATCH (v:Artifact)
WHERE v.key IN $keys AND NOT (e)-[:PUBLISHED]->(v)
WITH e, collect({vid: v.vid, content: v.content, meta: v.meta, recipe: v.recipe}) AS versions
RETURN e.erasure_prints AS recorded, [x IN versions WHERE x.vid IS NOT NULL] AS versions
