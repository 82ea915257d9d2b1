// The fingerprints of every erasing event, in every namespace: what the purge looks for
// in the data directory's files (hashes of phrases and identifiers, never the text).
// mode: read
// params:
MATCH (e:RepairEvent)
WHERE e.erasure_prints IS NOT NULL
RETURN e.ns AS ns, e.id AS event, e.erasure_prints AS prints
ORDER BY e.ns, e.id
