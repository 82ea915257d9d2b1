// Retention deletes exposure records by the time of their last read.
// mode: write
// params:
CREATE INDEX exposure_last IF NOT EXISTS FOR (x:Exposure) ON (x.last_at)
