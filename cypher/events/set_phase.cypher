// Record that a phase finished (and optional summary figures), inside that phase's
// transaction, so a crash never leaves the recorded phase ahead of the graph.
// mode: write
// params: $key, $phase, $status, $figures
MATCH (e:RepairEvent {key: $key})
SET e.phase = $phase, e.status = $status,
    e.phases = CASE WHEN $phase IN e.phases THEN e.phases ELSE e.phases + $phase END,
    e.phase_times = CASE WHEN $phase IN e.phases THEN e.phase_times
                         ELSE e.phase_times + toString(datetime()) END
SET e += $figures
RETURN e.phase AS phase
