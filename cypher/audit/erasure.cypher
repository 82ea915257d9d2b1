// An erasure record: when, how many versions, the hashes of the erased root versions, and
// how many fingerprints find a copy of the erased text (the text itself is not kept); with
// the late writes it covers (recorded withdrawn at once because an input of theirs was
// being or had been erased: redacted by the event, or redacted as they were written).
// Browser: :param ns => 'demo'; :param event => 'sample-delete-hotel'
// mode: read
// params: $ns, $event
MATCH (e:RepairEvent {key: $ns + '/' + $event})
OPTIONAL MATCH (v:Artifact {erased_by: e.key})
WITH e, v ORDER BY v.vid
RETURN e.id AS event, e.type AS type, e.status AS status, e.erased_at AS erased_at,
       e.erased_roots AS roots, e.erasure_prints AS fingerprints, count(v) AS versions,
       collect({vid: v.vid, sha256: v.erased_sha256})[..1000] AS redacted,
       count(CASE WHEN v.outcome IN ['stale_input', 'late_arrival'] THEN 1 END)
         AS late_write_count,
       collect(CASE WHEN v.outcome IN ['stale_input', 'late_arrival']
                    THEN {vid: v.vid, outcome: v.outcome} END)[..1000] AS late_writes
