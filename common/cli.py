"""Shared command-line conventions: --help everywhere, logging flags, meaningful exit codes."""

from __future__ import annotations

import argparse
import sys

from mast_common.log import setup_logging

# Exit codes (sysexits.h where one fits): operators script against these.
EXIT_OK = 0
EXIT_FAILURE = 1  # the job ran and an expectation failed
EXIT_USAGE = 64  # bad command line
EXIT_DATAERR = 65  # bad input data (MRT file, message)
EXIT_UNAVAILABLE = 69  # a peer (daemon, socket) could not be reached
EXIT_SOFTWARE = 70  # internal error
EXIT_CONFIG = 78  # bad configuration file


def add_logging_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--log-level", default="info", choices=["debug", "info", "warning", "error"]
    )
    parser.add_argument(
        "--log-format",
        default="logfmt",
        choices=["json", "logfmt"],
        help="json for log collectors, logfmt for people (default)",
    )


def apply_logging_args(args: argparse.Namespace) -> None:
    setup_logging(args.log_level, args.log_format)


def parse_command(
    parser: argparse.ArgumentParser, argv: list[str] | None
) -> argparse.Namespace | None:
    """Parse `argv`; with no subcommand, print the help to stderr and return None (exit EXIT_USAGE)."""
    args = parser.parse_args(argv)
    if getattr(args, "command", None) is None:
        parser.print_help(sys.stderr)
        return None
    return args
