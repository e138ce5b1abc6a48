"""Command line of rib-analysis: `classify` and `report` over MRT RIB dumps."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from mast_common.cli import (
    EXIT_DATAERR,
    EXIT_OK,
    EXIT_SOFTWARE,
    EXIT_USAGE,
    add_logging_args,
    apply_logging_args,
    parse_command,
)
from rib_analysis.classify import FirstHop


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="rib-analysis",
        description="Classify ASes in MRT RIB dumps and project the routing table under MAST/LIMA.",
        epilog="exit codes: 0 ok, 64 usage, 65 bad input (names file and byte offset), "
        "69 peer unavailable (history), 70 internal error, 130 interrupted",
    )
    add_logging_args(parser)
    sub = parser.add_subparsers(dest="command")

    def common(p: argparse.ArgumentParser) -> None:
        p.add_argument(
            "ribs",
            nargs="+",
            type=Path,
            metavar="RIB",
            help="MRT RIB dump (TABLE_DUMP or TABLE_DUMP_V2; plain, .gz or .bz2); "
            "several files are analysed as one table",
        )
        p.add_argument(
            "--skip-bad",
            action="store_true",
            help="count and skip malformed records instead of stopping at the first",
        )
        p.add_argument(
            "--strict",
            action="store_true",
            help="a truncated file is an error (default: warn, use what precedes the cut)",
        )
        p.add_argument(
            "--first-hop",
            type=FirstHop,
            choices=list(FirstHop),
            default=FirstHop.TRANSIT,
            help="how an AS seen only as a collector's peer counts (default: transit, "
            "the seed's rule; see METHOD.md)",
        )
        p.add_argument(
            "--ownership",
            type=Path,
            metavar="FILE",
            help="prefix-to-AS ownership file (pyasn ipasn format) for the MAST GRT",
        )
        p.add_argument(
            "--progress",
            choices=["auto", "never"],
            default="auto",
            help="progress bar on stderr (auto: only when stderr is a terminal)",
        )

    c = sub.add_parser("classify", help="classify ASes and print the projections")
    common(c)
    c.add_argument("--format", choices=["json", "table"], default="table")
    c.add_argument(
        "--top", type=_count, default=20, help="providers listed in `providers.top` (default 20)"
    )
    r = sub.add_parser("report", help="write report.html, report.json and report.md")
    common(r)
    r.add_argument("-o", "--output", type=Path, required=True, metavar="DIR")
    from rib_analysis.history import options as history_options  # light: no DuckDB/Dask here

    h = sub.add_parser("history", help=history_options.HELP)
    history_options.add_arguments(h, logging=False)
    return parser


def _count(text: str) -> int:
    n = int(text)
    if n < 0:
        raise argparse.ArgumentTypeError(f"{text} is negative")
    return n


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parse_command(parser, argv)
    if args is None:
        return EXIT_USAGE
    if args.command == "history":
        from rib_analysis.history.command import run

        return run(args)
    apply_logging_args(args)
    from rib_analysis.analysis import analyse
    from rib_analysis.ingest import MrtDataError
    from rib_analysis.ownership import OwnershipError
    from rib_analysis.progress import ProgressBar

    for rib in args.ribs:
        if not rib.is_file():
            print(f"rib-analysis: {rib}: no such file", file=sys.stderr)
            return EXIT_DATAERR
    bar = ProgressBar() if args.progress == "auto" and ProgressBar.wanted() else None
    try:
        result = analyse(
            args.ribs,
            skip_bad=args.skip_bad,
            strict=args.strict,
            first_hop=args.first_hop,
            ownership=args.ownership,
            progress=bar,
        )
    except (MrtDataError, OwnershipError) as e:
        if bar:
            bar.close()
        print(f"rib-analysis: {e}", file=sys.stderr)
        return EXIT_DATAERR
    except MemoryError:
        print("rib-analysis: out of memory", file=sys.stderr)
        return EXIT_SOFTWARE
    except KeyboardInterrupt:
        if bar:
            bar.close()
        print("rib-analysis: interrupted", file=sys.stderr)
        return 130
    except OSError as e:  # pipe or thread creation, not the input's fault
        print(f"rib-analysis: {e}", file=sys.stderr)
        return EXIT_SOFTWARE
    if bar:
        bar.close()
    for w in result.warnings:
        print(f"rib-analysis: warning: {w}", file=sys.stderr)
    if args.command == "classify":
        doc = result.as_json(top=args.top)
        try:
            if args.format == "json":
                json.dump(doc, sys.stdout, indent=2)
                sys.stdout.write("\n")
            else:
                sys.stdout.write(format_table(doc))
            sys.stdout.flush()
        except BrokenPipeError:  # `| head`: the reader has what it wanted
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK
    from rib_analysis.report import write_report

    try:
        paths = write_report(result, args.output)
    except OSError as e:
        print(f"rib-analysis: cannot write the report: {e}", file=sys.stderr)
        return EXIT_SOFTWARE
    for p in paths:
        print(p)
    return EXIT_OK


def format_table(doc: dict[str, Any]) -> str:
    a, g, p, t = doc["ases"], doc["grt"], doc["providers"], doc["stubs_table"]
    lines = [
        f"entries            {doc['entries']:>10,}",
        f"prefixes           {doc['prefixes']['total']:>10,}  (IPv4 {doc['prefixes']['ipv4']:,}, "
        f"IPv6 {doc['prefixes']['ipv6']:,})",
        f"ASes               {a['total']:>10,}  = {a['stubs']:,} stubs + {a['providers']:,} providers",
        "",
        f"{'stubs':14}{'PI':>9}{'PA':>9}{'both':>9}{'total':>9}",
    ]
    for kind in ("single", "multi"):
        r = t[kind]
        lines.append(
            f"{kind + '-homed':14}{r['pi']:>9,}{r['pa']:>9,}{r['both']:>9,}{r['total']:>9,}"
        )
    lines += [
        f"{'no upstream':14}{t['no_upstream']:>36,}",
        "",
        f"GRT today          {g['today']:>10,}",
        f"GRT under MAST     {g['mast']:>10,}  ({g['mast_source']}; reduction {g['reduction']:.1%})",
        f"LIMA table         {p['lima_table']:>10,}  provider ASNs",
        f"max stubs/provider {p['max_stubs']:>10,}  (AS{p['max_stubs_asn']})",
        f"provider table     {p['table_bounds']['max_lower']:>10,} .. {p['table_bounds']['max_upper']:,}"
        "  (largest lower .. upper bound)",
    ]
    return "\n".join(lines) + "\n"
