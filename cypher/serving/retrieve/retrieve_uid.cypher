// The serving read of one artifact by uid: its live version, or nothing. Its properties
// are named, never `.*`, which reads every property, the embedding's floats included:
// a sixth to over a quarter of a uid read's time on embedded memory
// (tests/unit/test_foundation.py).
// mode: read
// params: $key
MATCH (a:Head {key: $key})
WHERE a:Live
RETURN a {.uid, .version, .ns, .kind, .arch, .content, .value, .repair_cost,
          .recipe, .meta, .inputs} AS artifact, 'Live' AS visibility
