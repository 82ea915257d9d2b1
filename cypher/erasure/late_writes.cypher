// The late writes an erasing event's erasure covers: versions recorded withdrawn at once
// (`stale_input`, `late_arrival`) that it redacted, or that were written redacted because
// an input of theirs is erased (they arrived while it ran, or after it completed).
// mode: read
// params: $event_key
MATCH (a:Artifact {erased_by: $event_key})
WHERE a.outcome IN ['stale_input', 'late_arrival']
RETURN a.vid AS vid, a.outcome AS outcome
ORDER BY vid
