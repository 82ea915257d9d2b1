// Which open event holds a withdrawn node (overlapping events serialize on it).
// mode: write
// params:
CREATE INDEX withdrawn_holder IF NOT EXISTS FOR (a:Withdrawn) ON (a.held_by)
