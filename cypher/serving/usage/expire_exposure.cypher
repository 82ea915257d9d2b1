// Delete exposure records whose last read is older than the retention
// (MEMOREPAIR_EXPOSURE_RETENTION_DAYS), at most $limit per statement.
// mode: write
// params: $before, $limit
MATCH (x:Exposure)
WHERE x.last_at < $before
WITH x LIMIT $limit
DETACH DELETE x
RETURN count(*) AS expired
