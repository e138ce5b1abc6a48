"""Command line of srms: the daemon (`run`) and the operator's commands, which talk to it."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import signal
import sys
import time
from pathlib import Path
from typing import Any

from mast_common.cli import (
    EXIT_CONFIG,
    EXIT_FAILURE,
    EXIT_OK,
    EXIT_UNAVAILABLE,
    EXIT_USAGE,
    add_logging_args,
    apply_logging_args,
)
from mast_common.config import ConfigError
from mast_common.prefix import PrefixError, parse_prefix

from srms import config as srms_config
from srms.control import ControlError, request

DEFAULT_CONFIG = Path("/etc/srms/srms.toml")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="srms",
        description="Stub Reachability Management System: discourages a provider's prefixes"
        " when its access link fails, and restores them after the hold-down.",
    )
    add_logging_args(parser)
    parser.add_argument(
        "-c", "--config", type=Path, default=DEFAULT_CONFIG, help=f"default {DEFAULT_CONFIG}"
    )
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("run", help="run the daemon in the foreground")
    st = sub.add_parser("status", help="prefixes, links, pending actions, last events")
    st.add_argument("--json", action="store_true", help="machine-readable output")
    for name, what in (("discourage", "maintenance: discourage"), ("restore", "restore")):
        p = sub.add_parser(name, help=f"{what} a prefix now")
        p.add_argument("prefix")
    rn = sub.add_parser(
        "renumber",
        help="LIMA renumbering: add + publish the new prefix, wait the longest DNS TTL,"
        " withdraw the old one",
    )
    rn.add_argument("--add", required=True, metavar="PREFIX")
    rn.add_argument("--retire", required=True, metavar="PREFIX")
    rn.add_argument("--provider", help="provider of the new prefix (default: the old one's)")
    rn.add_argument("--wait", action="store_true", help="wait until the renumbering is done")
    sn = sub.add_parser(
        "snmpd-conf",
        help="print the snmpd.conf lines a border router needs (linkDown/linkUp within ~1 s)",
    )
    sn.add_argument(
        "--sink", required=True, help="SRMS's trap address, e.g. udp6:[2001:db8::5]:162"
    )
    sn.add_argument("--community", help="SNMPv2c community (traps)")
    sn.add_argument("--v3-user", help="SNMPv3 user (authPriv); keys from --auth-key/--priv-key")
    sn.add_argument("--auth-key")
    sn.add_argument("--priv-key")
    sn.add_argument("--engine-id", help="router engine ID (hex) for v3 traps; omit with --inform")
    sn.add_argument(
        "--inform", action="store_true", help="v3 informs (acknowledged) instead of traps"
    )
    sn.add_argument("--interval", type=int, default=1, help="ifOperStatus polling interval, s")
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    apply_logging_args(args)
    if args.command == "snmpd-conf":
        return snmpd_conf(args)
    try:
        cfg = srms_config.load(args.config)
    except ConfigError as exc:
        print(f"srms: {exc}", file=sys.stderr)
        return EXIT_CONFIG
    if args.command == "run":
        return run(cfg)
    sock = cfg.daemon.control_socket
    try:
        if args.command == "status":
            return status(cfg, args.json)
        if args.command in ("discourage", "restore"):
            prefix = parse_prefix(args.prefix)
            return _answer(request(sock, {"command": args.command, "prefix": str(prefix)}))
        if args.command == "renumber":
            req: dict[str, Any] = {
                "command": "renumber",
                "add": str(parse_prefix(args.add)),
                "retire": str(parse_prefix(args.retire)),
            }
            if args.provider:
                req["provider"] = args.provider
            rc = _answer(request(sock, req))
            if rc == EXIT_OK and args.wait:
                return _wait_renumber(sock, str(req["add"]))
            return rc
    except PrefixError as exc:
        print(f"srms: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except ControlError as exc:
        print(f"srms: {exc}", file=sys.stderr)
        return EXIT_UNAVAILABLE
    return EXIT_USAGE


def snmpd_conf(args: argparse.Namespace) -> int:
    from srms.snmpd_conf import V3Sink, snippet

    v3 = None
    if args.v3_user:
        if not (args.auth_key and args.priv_key):
            print("srms: --v3-user needs --auth-key and --priv-key", file=sys.stderr)
            return EXIT_USAGE
        v3 = V3Sink(
            args.v3_user, args.auth_key, args.priv_key, engine_id=args.engine_id, inform=args.inform
        )
    if v3 is None and args.community is None:
        print("srms: give --community and/or --v3-user", file=sys.stderr)
        return EXIT_USAGE
    print(snippet(args.sink, community=args.community, v3=v3, interval=args.interval), end="")
    return EXIT_OK


def _answer(answer: dict[str, Any]) -> int:
    if answer.get("ok"):
        print(json.dumps({k: v for k, v in answer.items() if k != "ok"}))
        return EXIT_OK
    print(f"srms: {answer.get('error')}", file=sys.stderr)
    return EXIT_FAILURE


def _wait_renumber(sock: Path, new: str) -> int:
    last = ""
    while True:
        report = request(sock, {"command": "status"})
        for r in report.get("renumberings", []):
            if r["new"] == new:
                line = f"renumber {r['retire']} -> {r['new']}: {r['phase']}"
                if r.get("wait_remaining"):
                    line += f" ({r['wait_remaining']:.0f} s left)"
                if r["phase"] != last:
                    print(line, flush=True)
                    last = r["phase"]
                if r["phase"] == "done":
                    return EXIT_OK
        time.sleep(0.5)


def run(cfg: srms_config.SrmsConfig) -> int:
    from srms.daemon import Srms

    async def main_task() -> None:
        daemon = Srms(cfg)
        task = asyncio.create_task(daemon.run())
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, task.cancel)
        with contextlib.suppress(asyncio.CancelledError):
            await task

    try:
        asyncio.run(main_task())
    except OSError as exc:
        print(f"srms: {exc}", file=sys.stderr)
        return EXIT_UNAVAILABLE
    return EXIT_OK


def status(cfg: srms_config.SrmsConfig, as_json: bool) -> int:
    try:
        report = request(cfg.daemon.control_socket, {"command": "status"}, timeout=5)
        report["source"] = "daemon"
    except ControlError:
        if not cfg.daemon.state_db.exists():
            print(f"srms: not running and no state in {cfg.daemon.state_db}", file=sys.stderr)
            return EXIT_UNAVAILABLE
        from srms.daemon import status_report
        from srms.store import Store

        store = Store(cfg.daemon.state_db)
        try:
            report = status_report(store, None, time.time())
        finally:
            store.close()
        report["source"] = "database (daemon not running)"
    if as_json:
        print(json.dumps(report, indent=2, default=str))
    else:
        print(format_status(report))
    return EXIT_OK


def format_status(report: dict[str, Any]) -> str:
    out = [f"source: {report.get('source', 'daemon')}", "prefixes:"]
    for p in report["prefixes"]:
        held = " (held by operator)" if p["held"] else ""
        out.append(f"  {p['prefix']:<28} {p['provider']:<12} {p['status']}{held}")
    out.append("links:")
    for link in report["links"]:
        state = "up" if link["up"] else "DOWN (" + ", ".join(link["down_sources"]) + ")"
        if link.get("restore_in") is not None:
            state += f", restore in {link['restore_in']:.1f} s"
        out.append(f"  {link['provider']:<12} {state}  flaps={link['flaps']}")
    out.append(f"pending actions: {len(report['pending_actions'])}")
    for a in report["pending_actions"]:
        err = f" last error: {a['last_error']}" if a["last_error"] else ""
        out.append(
            f"  {a['target']} {a['prefix']} -> {a['status']} attempts={a['attempts']}"
            f" next in {a['next_try_in']} s{err}"
        )
    for a in report.get("refused_actions", []):
        out.append(f"  REFUSED {a['target']} {a['prefix']} -> {a['status']}: {a['error']}")
    if report["renumberings"]:
        out.append("renumberings:")
        for r in report["renumberings"]:
            extra = f" ({r['wait_remaining']:.0f} s left)" if r.get("wait_remaining") else ""
            out.append(
                f"  #{r['id']} {r['retire']} -> {r['new']} [{r['provider']}]: {r['phase']}{extra}"
            )
    out.append("last transitions:")
    for t in report["transitions"]:
        stamp = time.strftime("%H:%M:%S", time.localtime(t["at"]))
        done = "done" if t["complete"] else "in progress"
        out.append(f"  {stamp} {t['prefix']} {t['old']} -> {t['new']} ({t['reason']}) {done}")
    out.append("last events:")
    for e in report["events"]:
        stamp = time.strftime("%H:%M:%S", time.localtime(e["at"]))
        out.append(f"  {stamp} {e['source']} {e['provider'] or ''} {e['kind']} {e['detail']}")
    return "\n".join(out)
