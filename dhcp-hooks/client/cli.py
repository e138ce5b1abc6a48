"""Command line of mast-client (subcommands are filled in by their issues)."""

from __future__ import annotations

import argparse
import sys

from mast_common.cli import EXIT_USAGE

COMING = [
    "run (listen for pushes, apply via netlink)",
]


def build_parser() -> argparse.ArgumentParser:
    return argparse.ArgumentParser(
        prog="mast-client",
        description="Host side of Broadcast Prefix Push: applies authenticated prefix status pushes via netlink.",
        epilog="coming: " + "; ".join(COMING),
    )


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    parser.parse_args(argv)
    parser.print_help(sys.stderr)
    return EXIT_USAGE
