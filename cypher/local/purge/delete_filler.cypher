// Delete a batch of purge filler nodes (their records are freed holding filler bytes).
// mode: write
// params: $limit
MATCH (f:PurgeFiller)
WITH f LIMIT $limit
DELETE f
RETURN count(*) AS deleted
