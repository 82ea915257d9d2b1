// The least a one-node write transaction does: one node with a content property (the
// baseline `record` is compared to in `bench perf --only writes`).
// mode: write
// params: $id, $content
CREATE (:BenchBare {id: $id, content: $content})
