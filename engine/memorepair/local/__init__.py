"""The local Neo4j Community server, for when no `NEO4J_URI` is set: the launcher
(`server`), the lines it runs (`releases`), its memory sizing (`sizing`), and physical
erasure (`purge`, over the record layout that `store_files` reads)."""
