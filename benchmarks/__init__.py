"""Benchmarks: `python -m benchmarks [NAME...]` runs benchmarks/bench_NAME.py (all by default)."""
