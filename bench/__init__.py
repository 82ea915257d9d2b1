"""Benchmarks that exercise MemoRepair on real data (optional ``bench`` extra)."""
