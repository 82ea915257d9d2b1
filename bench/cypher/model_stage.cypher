// Identity model (bench only, replaying an engine event): the successors an event built
// but did not publish (failed, blocked) stay as Staged versions, as in today's model,
// with no reads recorded (today's staged versions have no influence edges either).
// Rows {vid: the withdrawn version, version: the staged one's number}.
// mode: write
// params: $key, $rows
MATCH (e:RepairEvent {key: $key})
UNWIND $rows AS row
MATCH (d:Artifact {vid: row.vid})
CREATE (t:Artifact:Staged {vid: d.key + '@' + toString(row.version), key: d.key, ns: d.ns,
        uid: d.uid, version: row.version, kind: d.kind, arch: d.arch, content: d.content,
        inputs: d.inputs, created_at: datetime()})
CREATE (e)-[:STAGED]->(t)
RETURN count(t) AS staged
