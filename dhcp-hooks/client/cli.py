"""mast-client: the host side of Broadcast Prefix Push.

`mast-client run -i eth0` learns the push key from the DHCPv6 Replies on eth0 (or takes
--key), verifies every push (HMAC-SHA256, replay counter) and applies it over netlink.
`mast-client decode HEX` parses one push and prints it (for debugging captures).
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
from pathlib import Path
from types import FrameType
from typing import NoReturn

from mast_client.applier import NetlinkApplier
from mast_client.listener import PushListener
from mast_client.verifier import PushVerifier
from mast_client.wire import (
    DEFAULT_ENTERPRISE_ID,
    DEFAULT_MSG_TYPE,
    KeyInfo,
    PushError,
    parse_push,
)
from mast_common.cli import (
    EXIT_DATAERR,
    EXIT_OK,
    EXIT_UNAVAILABLE,
    EXIT_USAGE,
    add_logging_args,
    apply_logging_args,
    parse_command,
)
from mast_common.log import get_logger
from mast_common.metrics import MetricsEndpoint

log = get_logger("mast_client")


class _Parser(argparse.ArgumentParser):
    """argparse with the toolkit's usage exit code (64) instead of 2."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        print(f"{self.prog}: error: {message}", file=sys.stderr)
        sys.exit(EXIT_USAGE)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="mast-client",
        description="Host side of Broadcast Prefix Push: applies authenticated prefix status "
        "pushes via netlink.",
    )
    add_logging_args(parser)
    sub = parser.add_subparsers(dest="command")
    run = sub.add_parser("run", help="listen for pushes on an interface and apply them")
    run.add_argument("-i", "--interface", required=True)
    run.add_argument("--key", help="push key in hex (default: learned from DHCPv6 Replies)")
    run.add_argument("--enterprise-id", type=int, default=DEFAULT_ENTERPRISE_ID)
    run.add_argument("--push-type", type=int, default=DEFAULT_MSG_TYPE)
    run.add_argument("--stats-file", type=Path, help="JSON counters, rewritten on every event")
    run.add_argument("--metrics-port", type=int, help="serve Prometheus metrics on this port")
    run.add_argument("--metrics-addr", default="127.0.0.1")
    run.add_argument(
        "--ask-key-every",
        type=float,
        default=5.0,
        help="send an Information-Request every N s until a key is known (0: never)",
    )
    dec = sub.add_parser("decode", help="parse one push given in hex and print it as JSON")
    dec.add_argument("hex")
    dec.add_argument("--push-type", type=int, default=DEFAULT_MSG_TYPE)
    return parser


def _run(args: argparse.Namespace) -> int:
    verifier = PushVerifier(msg_type=args.push_type)
    if args.key:
        try:
            key = bytes.fromhex(args.key.replace(":", ""))
        except ValueError:
            print(f"mast-client: --key is not hex: {args.key!r}", file=sys.stderr)
            return EXIT_USAGE
        verifier.learn(KeyInfo(key, 0, args.push_type))
    try:
        applier = NetlinkApplier(args.interface)
    except LookupError as exc:
        print(f"mast-client: {exc}", file=sys.stderr)
        return EXIT_UNAVAILABLE
    listener = PushListener(
        args.interface,
        applier,
        verifier=verifier,
        enterprise_id=args.enterprise_id,
        stats_file=args.stats_file,
    )
    metrics = None
    if args.metrics_port is not None:
        metrics = MetricsEndpoint(listener.registry, args.metrics_addr, args.metrics_port).start()

    def stop(signum: int, frame: FrameType | None) -> None:
        listener.stop()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    try:
        listener.open()
        log.info("client.started", interface=args.interface, key_given=bool(args.key))
        listener.run(ask_key_every=args.ask_key_every)
    finally:
        listener.close()
        applier.close()
        if metrics:
            metrics.close()
    log.info("client.stopped", stats=json.dumps(listener.stats()))
    return EXIT_OK


def _decode(args: argparse.Namespace) -> int:
    try:
        data = bytes.fromhex(args.hex)
        push = parse_push(data, msg_type=args.push_type)
    except (ValueError, PushError) as exc:
        print(f"mast-client: not a push: {exc}", file=sys.stderr)
        return EXIT_DATAERR
    print(
        json.dumps(
            {
                "counter": push.counter,
                "server_duid": push.server_duid.hex(),
                "entries": [
                    {
                        "prefix": str(e.prefix),
                        "status": str(e.status),
                        "preferred_lifetime": e.preferred_lifetime,
                        "valid_lifetime": e.valid_lifetime,
                    }
                    for e in push.entries
                ],
            },
            indent=2,
        )
    )
    return EXIT_OK


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parse_command(parser, argv)
    if args is None:
        return EXIT_USAGE
    apply_logging_args(args)
    if args.command == "run":
        return _run(args)
    return _decode(args)


if __name__ == "__main__":
    sys.exit(main())
