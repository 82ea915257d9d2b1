// What a redaction needs of each version: its text, and whether it is a withdrawn
// current version (which keeps the meta and recipe parts that do not quote the text).
// mode: read
// params: $vids
UNWIND $vids AS v
MATCH (a:Artifact {vid: v})
RETURN a.vid AS vid, a:Head AND NOT a:Removed AS head, a.content AS content,
       a.meta AS meta, a.recipe AS recipe
