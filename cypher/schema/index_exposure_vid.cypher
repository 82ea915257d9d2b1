// `audit exposure` finds who read a withdrawn version by its vid.
// mode: write
// params:
CREATE INDEX exposure_vid IF NOT EXISTS FOR (x:Exposure) ON (x.vid)
