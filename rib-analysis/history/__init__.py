"""Longitudinal RIB analysis: one per-AS table per snapshot, cached in DuckDB, month-over-month series.

decode+classify (the snapshot classifier) → per-AS table (`astable`) → store/cache (`store`) →
series (`series`) → report (`report`); `sources` finds snapshots, `runner` spreads them over Dask.
"""
