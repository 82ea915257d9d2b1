// One usage log per namespace (when use recording began, reads recorded).
// mode: write
// params:
CREATE CONSTRAINT usage_log_ns IF NOT EXISTS FOR (l:UsageLog) REQUIRE l.ns IS UNIQUE
