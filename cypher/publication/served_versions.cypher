// Which of the given artifact keys (a repair batch's retained inputs) are served now, and
// at which version: [uid, version] of each current version that is live. Read after the
// batch's writer took its stripe of the publication lock (lock_stripe), which every
// barrier also takes, so no barrier changes the answer before the batch commits.
// mode: read
// params: $keys
UNWIND $keys AS k
MATCH (a:Head {key: k})
WHERE a:Live
RETURN collect([a.uid, a.version]) AS live
