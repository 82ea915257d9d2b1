// An erasure record: when, how many versions, the hashes of the erased root versions, and
// how many fingerprints find a copy of the erased text (the text itself is not kept).
// Browser: :param ns => 'demo'; :param event => 'sample-delete-hotel'
// mode: read
// params: $ns, $event
MATCH (e:RepairEvent {key: $ns + '/' + $event})
OPTIONAL MATCH (v:Artifact {erased_by: e.key})
RETURN e.id AS event, e.type AS type, e.status AS status, e.erased_at AS erased_at,
       e.erased_roots AS roots, e.erasure_prints AS fingerprints, count(v) AS versions,
       collect({vid: v.vid, sha256: v.erased_sha256})[..1000] AS redacted
