// The full-text index is eventually consistent (updated just after each commit): wait
// until it holds every committed write. Search runs this only when its process has
// written since it last did, so an idle process's searches never pay for it.
// mode: read
// params:
CALL db.index.fulltext.awaitEventuallyConsistentIndexRefresh()
RETURN true AS refreshed
