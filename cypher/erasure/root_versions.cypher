// The texts an erasing event erases: every version of its roots from before the event
// (not the replacement it published), the replacements it published (a correction's new
// text, which stays), and the fingerprints already recorded, if any (a resumed erasure
// reuses them: the texts may be redacted by then). With no such event (a plan), every
// version of the roots is from before it. `first_at`: when the first of those versions was
// recorded (memory recorded no later cannot have copied an identifier from them).
// mode: read
// params: $event_key, $keys
OPTIONAL MATCH (e:RepairEvent {key: $event_key})
OPTIONAL MATCH (v:Artifact)
WHERE v.key IN $keys
WITH e, v, e IS NOT NULL AND (e)-[:PUBLISHED]->(v) AS published
WITH e, collect(CASE WHEN v IS NOT NULL AND NOT published
                     THEN {vid: v.vid, content: v.content, meta: v.meta, recipe: v.recipe}
                END) AS versions,
     collect(CASE WHEN published THEN {content: v.content, meta: v.meta} END) AS replacements,
     min(CASE WHEN v IS NOT NULL AND NOT published THEN v.created_at END) AS first_at
RETURN e.erasure_prints AS recorded, versions, replacements, first_at
