"""Benchmarks: each figure next to a baseline measured in the same run (never timed tests)."""
