// Record who was served which version: per (version, principal, session) the reads, and
// the first and last read's time (epoch seconds, the reading process's clock). Ids and
// times only, never content: erasure has nothing to scrub here, and `clear` removes them
// with their namespace (they carry `ns`). `audit exposure` reads them back by `vid`.
// mode: write
// params: $ns, $rows
UNWIND $rows AS row
MERGE (x:Exposure {key: row.key})
  ON CREATE SET x.ns = $ns, x.vid = row.vid, x.uid = row.uid, x.version = row.version,
                x.principal = row.principal, x.session = row.session, x.count = 0,
                x.first_at = row.first, x.last_at = row.last
SET x.count = x.count + row.count,
    x.first_at = CASE WHEN row.first < x.first_at THEN row.first ELSE x.first_at END,
    x.last_at = CASE WHEN row.last > x.last_at THEN row.last ELSE x.last_at END
RETURN count(x) AS recorded
