// Mark late writes created redacted (their text never stored): the event whose erasure
// they fall under, a hash of what the writer sent, when. Never a served version.
// mode: write
// params: $rows
UNWIND $rows AS row
MATCH (a:Artifact {vid: row.vid})
WHERE NOT a:Live
SET a.erased_by = row.event, a.erased_sha256 = row.sha256, a.erased_at = datetime()
RETURN count(a) AS marked
