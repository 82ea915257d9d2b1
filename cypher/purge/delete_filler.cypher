// Delete a batch of purge filler nodes (their records are freed holding filler bytes).
// mode: write
// params: $batch
MATCH (f:PurgeFiller)
WITH f LIMIT $batch
DELETE f
RETURN count(*) AS deleted
