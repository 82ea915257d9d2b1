// Close an import record: `published` (with its figures), `discarded` or `failed`.
// mode: write
// params: $key, $status, $live, $withdrawn, $error
MATCH (i:Import {key: $key})
SET i.status = $status, i.ended_at = datetime(), i.live = $live, i.withdrawn = $withdrawn,
    i.error = $error
RETURN i.key AS key
