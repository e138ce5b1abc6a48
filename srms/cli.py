"""Command line of srms (subcommands are filled in by their issues)."""

from __future__ import annotations

import argparse
import sys

from mast_common.cli import EXIT_USAGE

COMING = [
    "run -c srms.toml",
    "status",
    "discourage PREFIX",
    "restore PREFIX",
    "renumber --add P --retire P",
]


def build_parser() -> argparse.ArgumentParser:
    return argparse.ArgumentParser(
        prog="srms",
        description="Stub Reachability Management System: discourages a provider's prefixes when its access link fails.",
        epilog="coming: " + "; ".join(COMING),
    )


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    parser.parse_args(argv)
    parser.print_help(sys.stderr)
    return EXIT_USAGE
