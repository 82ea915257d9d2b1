// Databases set up by earlier builds carry a uniqueness constraint on (:Live).key. It is
// implied by `head_key` (every Live node is a Head), and its index cost the barrier about
// 0.5 s per 100k withdrawn nodes (each `REMOVE d:Live` deleted an index entry).
// mode: write
// params:
DROP CONSTRAINT live_key IF EXISTS
