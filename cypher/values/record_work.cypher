// Learn what repairs cost: append one event's measured build + validation seconds to the
// namespace's record per operator and kind, keeping the most recent $window of them (the
// running median prices candidates that no repair has built yet; values.py). No content:
// only the operator's name, the kind and seconds.
// mode: write
// params: $ns, $rows, $window
UNWIND $rows AS row
MERGE (w:WorkStat {key: row.key})
  ON CREATE SET w.ns = $ns, w.operator = row.operator, w.kind = row.kind, w.samples = [],
                w.count = 0
WITH w, row, w.samples + row.samples AS joined
SET w.samples = joined[-$window..],
    w.count = w.count + size(row.samples),
    w.updated = datetime()
RETURN count(w) AS recorded
