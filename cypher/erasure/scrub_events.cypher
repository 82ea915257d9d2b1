// Replace event reasons and stored specs that quote erased text.
// mode: write
// params: $rows
UNWIND $rows AS row
MATCH (e:RepairEvent {key: row.key})
SET e.reason = row.reason, e.spec = row.spec
