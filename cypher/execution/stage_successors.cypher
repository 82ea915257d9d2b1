// Stage successors: new versions, invisible to serving, linked to what they replace.
// MERGE on vid makes a resumed or retried run find the same node instead of a twin.
// mode: write
// params: $event_key, $rows
MATCH (e:RepairEvent {key: $event_key})
UNWIND $rows AS row
MATCH (old:Artifact {vid: row.old_vid})
MERGE (new:Artifact {vid: row.vid})
ON CREATE SET new:Staged, new.key = old.key, new.ns = old.ns, new.uid = old.uid,
              new.version = old.version + 1, new.kind = old.kind, new.arch = old.arch,
              new.value = old.value, new.repair_cost = old.repair_cost,
              new.created_at = datetime(), new.event = e.id
SET new.content = row.content, new.recipe = row.recipe, new.meta = row.meta,
    new.inputs = row.inputs, new.validated = row.validated,
    new.validation = row.validation, new.operator = row.operator
MERGE (new)-[:SUPERSEDES]->(old)
MERGE (e)-[:STAGED]->(new)
RETURN count(new) AS staged
