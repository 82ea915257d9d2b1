// Listing a namespace's events.
// mode: write
// params:
CREATE INDEX event_ns IF NOT EXISTS FOR (e:RepairEvent) ON (e.ns)
