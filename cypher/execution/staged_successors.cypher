// What a previous (crashed) run of this event already staged, validated or published:
// successors it staged, and those it published without staging them first.
// mode: read
// params: $event_key
MATCH (e:RepairEvent {key: $event_key})-[:STAGED|PUBLISHED]->(new:Artifact)-[:SUPERSEDES]->(old)
RETURN DISTINCT old.vid AS old_vid,
       new {.uid, .version, .ns, .kind, .arch, .content, .value, .repair_cost,
            .recipe, .meta, .inputs, .validated, .validation} AS artifact,
       new:Live AS published
