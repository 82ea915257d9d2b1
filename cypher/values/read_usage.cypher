// The recorded use of the given artifact keys (ns/uid), whole records (they hold no
// content), and when the namespace's use recording began (its UsageLog), for the
// default values of a plan or repair (values.py). One record.
// mode: read
// params: $ns, $keys
OPTIONAL MATCH (log:UsageLog {ns: $ns})
CALL (log) {
  UNWIND $keys AS k
  MATCH (u:Usage {key: k})
  RETURN collect(properties(u)) AS uses
}
RETURN log.since AS since, log.reads AS reads, uses
