"""Command line of rib-analysis (subcommands are filled in by their issues)."""

from __future__ import annotations

import argparse
import sys

from mast_common.cli import EXIT_USAGE

COMING = [
    "classify RIB...",
    "report RIB... -o DIR",
    "history",
]


def build_parser() -> argparse.ArgumentParser:
    return argparse.ArgumentParser(
        prog="rib-analysis",
        description="Classify ASes in MRT RIB dumps and project the routing table under MAST/LIMA.",
        epilog="coming: " + "; ".join(COMING),
    )


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    parser.parse_args(argv)
    parser.print_help(sys.stderr)
    return EXIT_USAGE
