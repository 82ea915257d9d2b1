// Open (or reopen, after an interrupted or failed run of the same input) the record of a
// batch written staged: what it is (digest, count) and who writes it (host, pid, by).
// mode: write
// params: $key, $ns, $id, $digest, $count, $host, $pid, $by
MERGE (i:Import {key: $key})
SET i.ns = $ns, i.id = $id, i.digest = $digest, i.count = $count, i.host = $host,
    i.pid = $pid, i.by = $by, i.status = 'open', i.written = false,
    i.started_at = datetime(), i.ended_at = null, i.error = null,
    i.live = null, i.withdrawn = null
RETURN i.key AS key
