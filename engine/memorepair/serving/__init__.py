"""Serving reads: every path returns served (`Live`) versions only and says which version
it served (`search`: ranked by meaning and words; `reindex`: the embeddings it needs)."""
