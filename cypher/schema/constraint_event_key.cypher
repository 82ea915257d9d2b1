// Repair events are idempotent by (namespace, id).
// mode: write
// params:
CREATE CONSTRAINT event_key IF NOT EXISTS FOR (e:RepairEvent) REQUIRE e.key IS UNIQUE
