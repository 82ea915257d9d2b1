// Identity model variant (bench only, measured, not used): record the version read on
// each influence edge instead of on the version node. Every edge into a republished
// identity must be rewritten, since its input's current version changed too; this is
// what that costs. Rows {key, read_of: {input key: version read}}.
// mode: write
// params: $rows
UNWIND $rows AS row
MATCH (p:Identity)-[r:INFLUENCES]->(:Identity {key: row.key})
SET r.read = row.read_of[p.key]
RETURN count(r) AS edges
