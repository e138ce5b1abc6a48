"""The options of `rib-analysis history` (light: the CLI builds its parser without importing
DuckDB, pyarrow or Dask; `command` does the work)."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from mast_common.cli import add_logging_args

SERIAL = "serial"
LOCAL = "local"
HELP = "month-over-month series over many RIB snapshots (DuckDB-cached, Dask scale-out)"
_MONTH = re.compile(r"^\d{4}-(0[1-9]|1[0-2])$")


def _month(text: str) -> str:
    if not _MONTH.match(text):
        raise argparse.ArgumentTypeError(f"{text!r} is not YYYY-MM")
    return text


def _scheduler(text: str) -> str:
    if text in (SERIAL, LOCAL) or re.match(r"^(tcp|tls|inproc|ws|wss)://", text):
        return text
    raise argparse.ArgumentTypeError(
        f"{text!r}: serial, local or a scheduler address tcp://host:port"
    )


def add_arguments(parser: argparse.ArgumentParser, *, logging: bool = True) -> None:
    """Options of `history`; `logging=False` when the parent parser already has the log flags."""
    parser.epilog = (
        "exit codes: 0 ok, 64 bad sources or options, 65 a dump the classifier rejects (file and "
        "byte offset named), 69 pybgpstream/Dask scheduler/database unavailable, 70 internal "
        "error. Method: rib-analysis/HISTORY.md"
    )
    parser.add_argument(
        "sources",
        nargs="+",
        metavar="SOURCE",
        help="MRT dumps: files, globs, directories laid out like the RouteViews/RIS archives, or "
        "bgpstream:PROJECT/COLLECTOR (needs pybgpstream + libbgpstream)",
    )
    parser.add_argument(
        "-o",
        "--output",
        type=Path,
        required=True,
        metavar="DIR",
        help="report.{html,json,md} and parquet/ go here",
    )
    parser.add_argument(
        "--db",
        type=Path,
        metavar="FILE",
        help="history database (DuckDB; default DIR/history.duckdb): the cache of "
        "per-snapshot AS tables, keyed by content hash",
    )
    parser.add_argument(
        "--connect-timeout",
        type=float,
        default=30.0,
        metavar="SECONDS",
        help="how long to try reaching a --scheduler address (default 30)",
    )
    parser.add_argument(
        "--skip-bad",
        action="store_true",
        help="count and skip malformed records (as `classify --skip-bad`)",
    )
    parser.add_argument(
        "--strict",
        action="store_true",
        help="a truncated dump is an error (default: warn, use what precedes the cut)",
    )
    parser.add_argument(
        "--first-hop",
        choices=["transit", "origin-only"],
        default="transit",
        help="how an AS seen only as a collector's peer counts (METHOD.md)",
    )
    parser.add_argument("--collector", help="keep only this collector's snapshots")
    parser.add_argument("--since", type=_month, metavar="YYYY-MM", help="first month")
    parser.add_argument("--until", type=_month, metavar="YYYY-MM", help="last month")
    parser.add_argument(
        "--day",
        type=int,
        default=5,
        help="per month, the first dump on or after this day (default 5, as the seed)",
    )
    parser.add_argument(
        "--scheduler",
        type=_scheduler,
        default=LOCAL,
        metavar="WHERE",
        help="local (a Dask LocalCluster, default), serial, or tcp://host:port",
    )
    parser.add_argument(
        "--workers",
        type=int,
        metavar="N",
        help="LocalCluster worker processes (default: one per core)",
    )
    parser.add_argument(
        "--bgpstream-cache",
        type=Path,
        metavar="DIR",
        help="where BGPStream snapshots are written (default DIR/bgpstream)",
    )
    if logging:
        add_logging_args(parser)


def dispatch(args: argparse.Namespace) -> int:
    """Run `history` with parsed `args` (what the rib-analysis CLI calls)."""
    try:
        from rib_analysis.history.command import run
    except ImportError as exc:  # duckdb/pyarrow are the `analysis` extra
        import sys

        from mast_common.cli import EXIT_UNAVAILABLE

        print(
            f"rib-analysis history: {exc.name or exc} is not installed: "
            "`pip install 'mast-toolkit[analysis,dask]'`",
            file=sys.stderr,
        )
        return EXIT_UNAVAILABLE
    return run(args)
