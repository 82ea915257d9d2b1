// Filler nodes that make Neo4j overwrite freed store records (`memorepair neo4j purge`).
// Neo4j hands out freed record ids before new ones, so these writes land on the records
// an erasure freed (which keep their old bytes until reused). Each node fills one
// property record completely (four one-long blocks: two small integers, a string and a
// list, or integers in their place) and its `fill_text`/`fill_list` fill whole
// 120-byte dynamic records, so every byte of a reused record is overwritten.
// mode: write
// params: $from_id, $to_id, $texts, $lists, $text, $item
UNWIND range($from_id, $to_id) AS i
CREATE (:PurgeFiller {
  fill_id: i,
  fill_zero: 0,
  fill_text: CASE WHEN i < $texts THEN $text ELSE 0 END,
  fill_list: CASE WHEN i < $lists THEN [$item] ELSE 0 END
})
