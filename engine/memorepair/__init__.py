"""MemoRepair: barrier-first cascade repair for agent memory in Neo4j."""
