"""Served reads by uid, kind, substring and listing: served versions only, each saying
which version it served."""

from __future__ import annotations

from memorepair import queries

COUNT_BY_VISIBILITY = queries.named("serving/retrieve/count_by_visibility")
EXPORT_LIVE = queries.named("serving/retrieve/export_live")
RETRIEVE = queries.named("serving/retrieve/retrieve")
RETRIEVE_RELATED = queries.named("serving/retrieve/retrieve_related")
RETRIEVE_UID = queries.named("serving/retrieve/retrieve_uid")
RETRIEVE_SCAN_REST = queries.named("serving/retrieve/retrieve_scan_rest")
READ_SERVED = queries.named("serving/retrieve/read_served")
LIST_SERVED = queries.named("serving/retrieve/list_served")
LIST_PATHS = queries.named("serving/retrieve/list_paths")
