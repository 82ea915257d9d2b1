// Record what serving reads served: per artifact identity (ns/uid) a count, the last
// time it was served and a decayed frequency (each use weighs 2^(-age / half-life)),
// plus one UsageLog per namespace with the time recording began. No content: a usage
// record holds the uid, counts and times only, so erasure has nothing to scrub here.
// `at` is epoch seconds; a flush older than the stored one (another process) is decayed
// to the stored time instead, so the order of flushes does not matter.
// mode: write
// params: $ns, $rows, $half_life_s, $now
MERGE (log:UsageLog {ns: $ns})
  ON CREATE SET log.since = $now, log.reads = 0
SET log.reads = log.reads + reduce(n = 0, r IN $rows | n + r.count)
WITH log
UNWIND $rows AS row
MERGE (u:Usage {key: row.key})
  ON CREATE SET u.ns = $ns, u.uid = row.uid, u.count = 0, u.freq = 0.0,
                u.freq_at = row.at, u.last_used = row.at
WITH u, row, (row.at >= u.freq_at) AS newer
SET u.count = u.count + row.count,
    u.last_used = CASE WHEN row.at > u.last_used THEN row.at ELSE u.last_used END,
    u.freq = CASE WHEN newer
               THEN u.freq * 2.0 ^ (-(row.at - u.freq_at) / $half_life_s) + row.freq
               ELSE u.freq + row.freq * 2.0 ^ (-(u.freq_at - row.at) / $half_life_s) END,
    u.freq_at = CASE WHEN newer THEN row.at ELSE u.freq_at END
RETURN count(u) AS recorded
