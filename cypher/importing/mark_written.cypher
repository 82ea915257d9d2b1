// Every version of the batch is staged (and its related edges written): what remains is
// the publish transaction, which `resume` may run for a process killed before it.
// mode: write
// params: $key, $staged
MATCH (i:Import {key: $key})
WHERE i.status = 'open' AND i.count = $staged
SET i.written = true
RETURN count(i) AS marked
