"""Command line of itmp: `itmp router-agent`, `itmp tms`, `itmp stub`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from mast_common.cli import (
    EXIT_CONFIG,
    EXIT_OK,
    EXIT_SOFTWARE,
    EXIT_UNAVAILABLE,
    EXIT_USAGE,
    add_logging_args,
    apply_logging_args,
    parse_command,
)
from mast_common.config import ConfigError, load_config
from mast_common.log import get_logger

from itmp.routerclient import RouterError

log = get_logger("itmp")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="itmp",
        description="Inter-domain Tunnel Management Protocol: backup tunnels with BGP, provisioned over NETCONF.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    agent = sub.add_parser(
        "router-agent",
        help="NETCONF server (SSH) in front of a Linux + BIRD 2 router (model urn:mast:router:1)",
        description="Serve the urn:mast:router:1 model over NETCONF/SSH and apply it to the kernel and BIRD.",
    )
    agent.add_argument("-c", "--config", type=Path, required=True, help="agent TOML file")
    add_logging_args(agent)
    tms = sub.add_parser(
        "tms",
        help="provider Tunnel Management System: authorizes stubs, provisions the gateway router",
        description="Serve ITMP over TLS 1.3 (mutual certificates) and provision backup tunnels over NETCONF.",
    )
    tms.add_argument("-c", "--config", type=Path, required=True, help="TMS TOML file")
    add_logging_args(tms)
    stub = sub.add_parser(
        "stub",
        help="stub side: request backup tunnels from every provider and keep them up",
        description=(
            "Request a backup tunnel from each provider through each other provider;"
            " configure the stub border router."
        ),
    )
    stub.add_argument("-c", "--config", type=Path, required=True, help="stub TOML file")
    stub.add_argument(
        "--once", action="store_true", help="bring tunnels up, print them, exit (no keepalive loop)"
    )
    add_logging_args(stub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parse_command(parser, argv)
    if args is None:
        return EXIT_USAGE
    apply_logging_args(args)
    try:
        if args.command == "router-agent":
            from itmp.router.agent import AgentConfig, run_agent

            return run_agent(load_config(args.config, AgentConfig), debug=args.log_level == "debug")
        if args.command == "tms":
            from itmp.tms import TmsConfig, run_tms

            return run_tms(load_config(args.config, TmsConfig))
        if args.command == "stub":
            from itmp.stub import StubConfig, run_stub

            return run_stub(load_config(args.config, StubConfig), once=args.once)
    except ConfigError as exc:
        print(f"itmp: {exc}", file=sys.stderr)
        return EXIT_CONFIG
    except OSError as exc:
        print(f"itmp: {exc}", file=sys.stderr)
        return EXIT_UNAVAILABLE
    except RouterError as exc:
        print(f"itmp: router agent: {exc}", file=sys.stderr)
        return EXIT_UNAVAILABLE
    except KeyboardInterrupt:
        return EXIT_OK
    except Exception as exc:
        log.error("itmp.crashed", error=str(exc), exc_info=True)
        return EXIT_SOFTWARE
    return EXIT_USAGE
