// Identity model (bench only): the influence edges that change when a republish changes
// who reads whom; only these are written (none when every successor keeps its inputs and
// every input was republished with it). Rows {src, dst, link}: `drop` (dst's current
// version no longer reads src: a removed or deleted input), `current` (it reads src's
// current version: INFLUENCES, followed by reach), `behind` (it still reads an older
// version of src, which was republished without it: INFLUENCED, not followed, like
// today's edge from a superseded version).
// mode: write
// params: $rows
UNWIND $rows AS row
MATCH (p:Identity {key: row.src})
MATCH (c:Identity {key: row.dst})
OPTIONAL MATCH (p)-[old:INFLUENCES|INFLUENCED]->(c)
WITH p, c, row, collect(old) AS olds
FOREACH (o IN olds | DELETE o)
FOREACH (_ IN CASE WHEN row.link = 'current' THEN [1] ELSE [] END |
  CREATE (p)-[:INFLUENCES]->(c))
FOREACH (_ IN CASE WHEN row.link = 'behind' THEN [1] ELSE [] END |
  CREATE (p)-[:INFLUENCED]->(c))
RETURN count(row) AS relinked
