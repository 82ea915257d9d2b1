// Remove the bare-write baseline's nodes.
// mode: write
// params:
MATCH (b:BenchBare) DETACH DELETE b
