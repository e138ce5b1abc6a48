"""`python -m mast_dns`: read and flip a zone's prefix statuses by hand (RFC 2136 + TSIG).

SRMS does this automatically; the command is for operators and labs. Exit codes follow
mast_common.cli: 0 ok, 1 the server refused, 64 usage, 65 bad zone data, 69 no answer.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from mast_common.cli import (
    EXIT_DATAERR,
    EXIT_FAILURE,
    EXIT_OK,
    EXIT_UNAVAILABLE,
    EXIT_USAGE,
    add_logging_args,
    apply_logging_args,
)
from mast_common.prefix import PrefixStatus, parse_ifid

from .update import DnsUpdateError, TsigKey, ZoneUpdater
from .zonedata import ZoneDataError, ifid_text


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m mast_dns", description=__doc__)
    p.add_argument("--server", required=True, help="authoritative server address")
    p.add_argument("--port", type=int, default=53)
    p.add_argument("--zone", required=True, help="zone origin, e.g. lab.mast.")
    p.add_argument("--key-name", help="TSIG key name (as in knotd's key: section)")
    p.add_argument("--key-file", type=Path, help="file holding the base64 TSIG secret")
    p.add_argument("--algorithm", default="hmac-sha256")
    p.add_argument("--timeout", type=float, default=2.0)
    p.add_argument("--retries", type=int, default=3)
    add_logging_args(p)
    sub = p.add_subparsers(dest="command", required=True)
    sub.add_parser("status", help="print the status RRset in preference order")
    s = sub.add_parser("set", help="set a prefix's status (withdrawn removes it)")
    s.add_argument("prefix", help="IPv6 prefix or LIMA pair AS<asn>:<stub>")
    s.add_argument("status", choices=[x.value for x in PrefixStatus])
    a = sub.add_parser("add", help="add a prefix (or move it with --position)")
    a.add_argument("prefix")
    a.add_argument("--position", type=int, help="0 = most preferred (default: last)")
    a.add_argument("--discouraged", action="store_true")
    r = sub.add_parser("remove", help="withdraw a prefix")
    r.add_argument("prefix")
    sub.add_parser("hosts", help="print the host IFID map")
    m = sub.add_parser("map", help="map a host to its interface ID")
    m.add_argument("name")
    m.add_argument("ifid", help="'::a:b:c:d' or 0x...")
    u = sub.add_parser("unmap", help="remove a host from the map")
    u.add_argument("name")
    return p


def run(args: argparse.Namespace) -> int:
    key = None
    if args.key_name or args.key_file:
        if not (args.key_name and args.key_file):
            print("--key-name and --key-file go together", file=sys.stderr)
            return EXIT_USAGE
        key = TsigKey(args.key_name, args.key_file.read_text().strip(), args.algorithm)
    dns = ZoneUpdater(
        args.server, args.zone, key, port=args.port, timeout=args.timeout, retries=args.retries
    )
    if args.command == "status":
        for prefix, status in dns.prefix_statuses():
            print(f"{prefix} {status}")
    elif args.command == "set":
        dns.set_prefix_status(args.prefix, PrefixStatus(args.status))
    elif args.command == "add":
        status = PrefixStatus.DISCOURAGED if args.discouraged else PrefixStatus.PREFERRED
        dns.add_prefix(args.prefix, status=status, position=args.position)
    elif args.command == "remove":
        dns.remove_prefix(args.prefix)
    elif args.command == "hosts":
        for name, ifid in sorted(dns.hosts().items()):
            print(f"{name} {ifid_text(ifid)}")
    elif args.command == "map":
        dns.add_host(args.name, parse_ifid(args.ifid))
    elif args.command == "unmap":
        dns.remove_host(args.name)
    return EXIT_OK


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    apply_logging_args(args)
    try:
        return run(args)
    except DnsUpdateError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_UNAVAILABLE if exc.rcode == "TIMEOUT" else EXIT_FAILURE
    except ZoneDataError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_DATAERR
    except (ValueError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
