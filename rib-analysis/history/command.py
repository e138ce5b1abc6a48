"""`rib-analysis history SOURCE... -o DIR`: the month-over-month series and its report."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from mast_common.cli import (
    EXIT_DATAERR,
    EXIT_OK,
    EXIT_SOFTWARE,
    EXIT_UNAVAILABLE,
    EXIT_USAGE,
    apply_logging_args,
)
from mast_common.log import get_logger
from rib_analysis.history import report as history_report
from rib_analysis.history.bgpstream import BgpstreamUnavailable, is_stream_spec, stream_snapshots
from rib_analysis.history.classifier import SnapshotError, analyser_for
from rib_analysis.history.options import HELP, add_arguments
from rib_analysis.history.runner import Analyser, ClusterUnavailable, analyse_all
from rib_analysis.history.series import Snapshot, compute
from rib_analysis.history.sources import SnapshotRef, SourceError, local_snapshots
from rib_analysis.history.store import Store, StoreError, write_stub_changes

log = get_logger(__name__)


def resolve(args: argparse.Namespace) -> list[SnapshotRef]:
    streams = [s for s in args.sources if is_stream_spec(s)]
    files = [s for s in args.sources if not is_stream_spec(s)]
    if (streams and files) or len(streams) > 1:
        raise SourceError("give either local dumps or one bgpstream:PROJECT/COLLECTOR, not both")
    if streams:
        return stream_snapshots(
            streams[0],
            since=args.since,
            until=args.until,
            day=args.day,
            cache=args.bgpstream_cache or args.output / "bgpstream",
        )
    return local_snapshots(
        files, collector=args.collector, day=args.day, since=args.since, until=args.until
    )


def history(args: argparse.Namespace, analyser: Analyser | None = None) -> int:
    """Run the series; `analyser` replaces the classifier's (same cache key: tests count calls)."""
    default, analyser_version = analyser_for(
        skip_bad=args.skip_bad, strict=args.strict, first_hop=args.first_hop
    )
    analyser = analyser or default
    refs = resolve(args)
    if not refs:
        raise SourceError("no snapshot to analyse")
    db = args.db or args.output / "history.duckdb"
    with Store(db) as store:
        outcomes, stats = analyse_all(
            refs,
            store,
            analyser,
            analyser_version,
            mode=args.scheduler,
            workers=args.workers,
            connect_timeout=args.connect_timeout,
        )
        series = compute([Snapshot(o.ref.month, o.table, o.ref.path) for o in outcomes])
        store.export_parquet(
            args.output / "parquet", analyser_version, [(o.ref, o.sha256) for o in outcomes]
        )
    write_stub_changes(args.output / "parquet" / "stub_changes.parquet", series.stub_changes)
    report = history_report.HistoryReport(
        collector=refs[0].collector,
        analyser=analyser_version,
        outcomes=outcomes,
        stats=stats,
        series=series,
    )
    paths = history_report.write(report, args.output)
    log.info(
        "history.done",
        snapshots=stats.snapshots,
        decoded=stats.decoded,
        cached=stats.cached,
        seconds=round(stats.wall_seconds, 2),
        report=str(paths[-1]),
    )
    print(
        f"{stats.snapshots} snapshots ({stats.decoded} decoded, {stats.cached} cached): {paths[-1]}"
    )
    return EXIT_OK


def run(args: argparse.Namespace) -> int:
    """Entry point from the rib-analysis CLI: errors become one line on stderr and an exit code."""
    apply_logging_args(args)
    try:
        return history(args)
    except BgpstreamUnavailable as exc:
        return _fail(exc, EXIT_UNAVAILABLE)
    except ClusterUnavailable as exc:
        return _fail(exc, EXIT_UNAVAILABLE)
    except SourceError as exc:
        return _fail(exc, EXIT_USAGE)
    except SnapshotError as exc:
        return _fail(exc, EXIT_DATAERR)
    except StoreError as exc:
        return _fail(exc, EXIT_UNAVAILABLE)
    except OSError as exc:
        return _fail(exc, EXIT_SOFTWARE)


def _fail(exc: BaseException, code: int) -> int:
    import sys

    print(f"rib-analysis history: {exc}", file=sys.stderr)
    return code


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m rib_analysis.history` (the same as `rib-analysis history`)."""
    parser = argparse.ArgumentParser(prog="rib-analysis history", description=HELP)
    add_arguments(parser)
    return run(parser.parse_args(argv))
