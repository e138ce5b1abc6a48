"""RIB history: N monthly snapshots analysed serially vs on a Dask LocalCluster (2 workers).

Prints the wall time of each, their ratio (the scale-out speedup on this machine), the cost per
snapshot, and a third run that finds everything in the content-hash cache. Snapshots are
synthetic TABLE_DUMP_V2 dumps (rib_analysis.history.synth) written once into a temporary
directory; `--quick` makes them small.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from rib_analysis.history.classifier import analyser_for
from rib_analysis.history.runner import LOCAL, SERIAL, RunStats, analyse_all, dask_client
from rib_analysis.history.sources import SnapshotRef, expand, local_snapshots, snapshot_ref
from rib_analysis.history.store import Store
from rib_analysis.history.synth import random_series, write_series


def timed_run(refs: list[SnapshotRef], db: Path, mode: str, workers: int) -> tuple[RunStats, float]:
    analyser, version = analyser_for()
    with Store(db) as store:
        outcomes, stats = analyse_all(refs, store, analyser, version, mode=mode, workers=workers)
    worker_seconds = sum(o.seconds for o in outcomes) / max(1, len(outcomes))
    return stats, worker_seconds


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="bench_rib_history", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="6 small snapshots")
    parser.add_argument("--snapshots", type=int, help="how many monthly snapshots")
    parser.add_argument("--stubs", type=int, help="stubs per snapshot")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument(
        "--ribs",
        nargs="+",
        metavar="DUMP",
        help="real dumps instead of synthetic ones (each one snapshot; e.g. ../shared/data/ribs)",
    )
    args = parser.parse_args(argv)
    n = args.snapshots or (6 if args.quick else 12)
    stubs = args.stubs or (3_000 if args.quick else 20_000)
    providers = max(20, stubs // 20)
    with tempfile.TemporaryDirectory(prefix="bench-rib-history-") as tmp:
        if args.ribs:
            refs = [snapshot_ref(p) for p in expand(args.ribs)]
            n = len(refs)
            size = sum(Path(r.path).stat().st_size for r in refs)
            print(f"input: {n} real dumps, {size / 1e6:.1f} MB compressed")
        else:
            root = Path(tmp) / "route-views.bench"
            t0 = time.perf_counter()
            paths = write_series(
                root, random_series(n, providers=providers, stubs=stubs, change_rate=0.02, seed=11)
            )
            size = sum(p.stat().st_size for p in paths)
            print(
                f"input: {n} synthetic snapshots, {stubs:,} stubs + {providers:,} providers each, "
                f"{size / 1e6:.1f} MB gzip (written in {time.perf_counter() - t0:.1f} s)"
            )
            refs = local_snapshots([str(root)])
        serial, serial_worker = timed_run(refs, Path(tmp) / "serial.duckdb", SERIAL, 1)
        local, local_worker = timed_run(refs, Path(tmp) / "local.duckdb", LOCAL, args.workers)
        cached, _ = timed_run(refs, Path(tmp) / "local.duckdb", SERIAL, 1)
    t0 = time.perf_counter()
    with dask_client(None, args.workers) as client:
        client.wait_for_workers(args.workers, timeout=120)
    startup = time.perf_counter() - t0
    assert serial.decoded == n and local.decoded == n and cached.decoded == 0
    print(
        f"serial:       {serial.wall_seconds:7.2f} s  ({serial.wall_seconds / n:.3f} s/snapshot wall, "
        f"{serial_worker:.3f} s/snapshot decode+classify)"
    )
    print(
        f"LocalCluster: {local.wall_seconds:7.2f} s  ({local.wall_seconds / n:.3f} s/snapshot wall, "
        f"{local_worker:.3f} s/snapshot on a worker; {args.workers} workers x 1 thread, incl. start-up)"
    )
    print(f"cached re-run:{cached.wall_seconds:7.2f} s  (0 decoded: hashing + DuckDB reads)")
    print(f"LocalCluster start + stop alone: {startup:.2f} s")
    print(f"ratio serial/LocalCluster: {serial.wall_seconds / local.wall_seconds:.2f}x")
    steady = local.wall_seconds - startup
    if steady > 0:
        print(f"ratio serial/LocalCluster without start-up: {serial.wall_seconds / steady:.2f}x")
    return 0
