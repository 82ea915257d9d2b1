// Drop the synchronous full-text index of earlier builds; `apply_schema` recreates it
// eventually consistent right after (search falls back to nothing only in between).
// mode: write
// params:
DROP INDEX artifact_search IF EXISTS
