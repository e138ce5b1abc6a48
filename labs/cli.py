"""Command line of mast-lab (subcommands are filled in by their issues)."""

from __future__ import annotations

import argparse
import sys

from mast_common.cli import EXIT_USAGE

COMING = [
    "up LAB",
    "down LAB",
    "status LAB",
    "failover LAB",
]


def build_parser() -> argparse.ArgumentParser:
    return argparse.ArgumentParser(
        prog="mast-lab",
        description="MAST failover lab: containerlab topology realised in network namespaces.",
        epilog="coming: " + "; ".join(COMING),
    )


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    parser.parse_args(argv)
    parser.print_help(sys.stderr)
    return EXIT_USAGE
