// The erasure record, written before any text is redacted: the fingerprints that find a
// copy of the erased text (hashes of its phrases and identifiers, never the text) and a
// hash of each erased root version.
// mode: write
// params: $event_key, $prints, $hashes
MATCH (e:RepairEvent {key: $event_key})
SET e.erasure_prints = $prints, e.erased_roots = $hashes, e.erasure_started_at = datetime()
