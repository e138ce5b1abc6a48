"""Command line of itmp (subcommands are filled in by their issues)."""

from __future__ import annotations

import argparse
import sys

from mast_common.cli import EXIT_USAGE

COMING = [
    "stub",
    "tms",
    "router-agent",
]


def build_parser() -> argparse.ArgumentParser:
    return argparse.ArgumentParser(
        prog="itmp",
        description="Inter-domain Tunnel Management Protocol: backup tunnels with BGP, provisioned over NETCONF.",
        epilog="coming: " + "; ".join(COMING),
    )


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    parser.parse_args(argv)
    parser.print_help(sys.stderr)
    return EXIT_USAGE
