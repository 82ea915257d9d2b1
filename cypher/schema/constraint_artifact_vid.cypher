// One node per version of an artifact.
// mode: write
// params:
CREATE CONSTRAINT artifact_vid IF NOT EXISTS FOR (a:Artifact) REQUIRE a.vid IS UNIQUE
