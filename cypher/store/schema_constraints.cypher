// The names of the database's constraints: writes refuse to run without MemoRepair's own
// (see Store.require_schema), since uniqueness of the current version per uid is what
// keeps one served version per artifact, and every lookup by vid or key uses them.
// mode: read
// params:
SHOW CONSTRAINTS YIELD name
RETURN collect(name) AS names
