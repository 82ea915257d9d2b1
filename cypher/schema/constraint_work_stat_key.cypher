// One record of measured repair work per namespace, operator and kind (ns/operator/kind):
// the recent seconds a repair of that kind took, whose median prices candidates no repair
// has built yet (values.py).
// mode: write
// params:
CREATE CONSTRAINT work_stat_key IF NOT EXISTS FOR (w:WorkStat) REQUIRE w.key IS UNIQUE
