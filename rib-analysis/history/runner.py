"""Analyse many snapshots: serially, on a Dask LocalCluster, or on a cluster at a scheduler address.

Hashing and the cache lookup happen here, in the calling process (the one DuckDB writer); only
snapshots missing from the cache go to the workers, which decode and classify and send back the
per-AS table. Workers of a remote cluster must see the dump paths at the same place (shared
storage), as is usual for Dask.
"""

from __future__ import annotations

import importlib
import os
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mast_common.log import get_logger
from rib_analysis.history.astable import AsTable
from rib_analysis.history.options import LOCAL, SERIAL
from rib_analysis.history.sources import SnapshotRef
from rib_analysis.history.store import Store, content_hash

log = get_logger(__name__)

Analyser = Callable[[str], AsTable]


class ClusterUnavailable(Exception):
    """The Dask scheduler cannot be reached or the cluster cannot start."""


@dataclass(frozen=True)
class Outcome:
    ref: SnapshotRef
    sha256: str
    table: AsTable
    cached: bool
    seconds: float  # decode + classify time on the worker (from the cache: when it was made)


@dataclass(frozen=True)
class RunStats:
    snapshots: int
    decoded: int
    cached: int
    wall_seconds: float
    mode: str


def timed_analysis(analyser: Analyser, path: str) -> tuple[AsTable, float]:
    """Runs on a worker: the AS table and the time it took there."""
    t0 = time.perf_counter()
    table = analyser(path)
    return table, time.perf_counter() - t0


@contextmanager
def dask_client(
    scheduler: str | None, n_workers: int = 2, connect_timeout: float = 30.0
) -> Iterator[Any]:
    """A distributed Client: to `scheduler` when given, else to a LocalCluster of processes."""
    try:
        # Untyped library: held as Any so strict mypy checks our side only.
        distributed: Any = importlib.import_module("distributed")
    except ImportError as exc:
        raise ClusterUnavailable(
            "Dask is not installed: `pip install 'mast-toolkit[dask]'`, or use --scheduler serial"
        ) from exc
    if scheduler is not None:
        try:
            client = distributed.Client(scheduler, timeout=connect_timeout)
        except (OSError, TimeoutError) as exc:
            raise ClusterUnavailable(f"cannot reach the Dask scheduler {scheduler}: {exc}") from exc
        try:
            yield client
        finally:
            client.close()
        return
    # One single-threaded process per core: decoding holds the GIL only between records, but
    # processes also keep one snapshot's memory from pinning another's.
    try:
        cluster = distributed.LocalCluster(
            n_workers=n_workers,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
            silence_logs=40,
        )
    except (RuntimeError, OSError, TimeoutError) as exc:
        raise ClusterUnavailable(f"the Dask LocalCluster did not start: {exc}") from exc
    try:
        client = distributed.Client(cluster)
        try:
            yield client
        finally:
            client.close()
    finally:
        cluster.close()


def default_workers() -> int:
    return max(1, min(len(os.sched_getaffinity(0)), 8))


def analyse_all(
    refs: Sequence[SnapshotRef],
    store: Store,
    analyser: Analyser,
    analyser_version: str,
    *,
    mode: str = LOCAL,
    workers: int | None = None,
    connect_timeout: float = 30.0,
) -> tuple[list[Outcome], RunStats]:
    """Every snapshot's AS table, from the cache where it is there, else analysed and cached.

    `mode` is "serial", "local" (a LocalCluster) or a scheduler address (tcp://host:port).
    """
    t0 = time.perf_counter()
    hashes = {ref.path: content_hash(Path(ref.path)) for ref in refs}
    todo: dict[str, SnapshotRef] = {}  # by hash: the same bytes under two names decode once
    for ref in refs:
        sha = hashes[ref.path]
        if store.lookup(sha, analyser_version) is None:
            todo.setdefault(sha, ref)
    log.info("history.plan", snapshots=len(refs), to_decode=len(todo), mode=mode)

    fresh: dict[str, tuple[AsTable, float]] = {}

    def keep(sha: str, ref: SnapshotRef, table: AsTable, seconds: float) -> None:
        store.put(sha, analyser_version, Path(ref.path), seconds, table)
        fresh[sha] = (table, seconds)
        log.info("history.analysed", path=ref.path, ases=len(table), seconds=round(seconds, 3))

    if todo and mode == SERIAL:
        for sha, ref in todo.items():
            table, seconds = timed_analysis(analyser, ref.path)
            keep(sha, ref, table, seconds)
    elif todo:
        as_completed: Any = importlib.import_module("distributed").as_completed

        with dask_client(
            None if mode == LOCAL else mode, workers or default_workers(), connect_timeout
        ) as client:
            futures = {
                client.submit(
                    timed_analysis, analyser, ref.path, key=f"analyse-{sha}", pure=False
                ): (
                    sha,
                    ref,
                )
                for sha, ref in todo.items()
            }
            for future in as_completed(futures):
                sha, ref = futures[future]
                table, seconds = future.result()
                keep(sha, ref, table, seconds)

    outcomes = []
    loaded: dict[str, tuple[AsTable, float]] = {}
    for ref in refs:
        sha = hashes[ref.path]
        if sha not in fresh and sha not in loaded:
            cached = store.lookup(sha, analyser_version)
            if cached is None:
                raise RuntimeError(f"{ref.path}: analysed but not in the history database")
            loaded[sha] = (store.get(sha, analyser_version), cached.seconds)
        table, seconds = fresh.get(sha) or loaded[sha]
        outcomes.append(Outcome(ref, sha, table, cached=sha not in fresh, seconds=seconds))
    stats = RunStats(
        snapshots=len(refs),
        decoded=len(fresh),
        cached=len(refs) - sum(1 for o in outcomes if not o.cached),
        wall_seconds=time.perf_counter() - t0,
        mode=mode,
    )
    return outcomes, stats
