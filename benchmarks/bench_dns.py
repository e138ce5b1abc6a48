"""mod-mast vs literal AAAA records, in real knotd instances inside lab namespaces.

1. Query throughput: dnsperf against a knotd whose zone is answered by mod-mast (status APL +
   host map) and against a knotd serving the same hosts as literal AAAA records. Rounds
   alternate between the two so load from other processes hits both; the ratio of medians is
   printed (goal: the module loses at most 10%).
2. Discouraging a prefix for N names: the module path sends one RFC 2136 update (the APL
   record); the plain path sends one update per host removing its AAAA of that prefix.
"""

from __future__ import annotations

import argparse
import base64
import os
import re
import statistics
import sys
import time
from pathlib import Path

import dns.message
import dns.query
import dns.rdatatype
from mast_common.daemons import start_knot
from mast_common.netns import Lab, Node
from mast_common.nsenter import inside
from mast_common.prefix import PrefixStatus
from mast_dns.knotconf import key_and_acl, module_sections, wait_loaded, zone_options, zone_text
from mast_dns.update import TsigKey, ZoneUpdater

REPO = Path(__file__).resolve().parent.parent
MODULE = REPO / "build" / "dns-plugins" / "mod_mast.so"
ORIGIN = "bench.mast."
KEY = TsigKey("bench-key.", base64.b64encode(b"mast benchmark key, 32 bytes...").decode())
PREFIX_A, PREFIX_B = "2001:db8:a::/64", "2001:db8:b::/64"
# Flushing a 10,000-record zone file after every update would measure disk writes, not DNS.
KNOT_ZONE_TUNING = "    zonefile-sync: -1\n    journal-max-usage: 200M\n"


def hosts(count: int) -> dict[str, int]:
    return {f"h{i}": 0x1000 + i for i in range(count)}


def start(node: Node, *, module: bool, names: dict[str, int]) -> int:
    prefixes = [(PREFIX_A, PrefixStatus.PREFERRED), (PREFIX_B, PrefixStatus.PREFERRED)]
    text = zone_text(
        ORIGIN,
        hosts=names,
        prefixes=prefixes,
        literal=not module,
        mapped=module,
        status_record=module,
    )
    knot = start_knot(
        node,
        listen=["::1@53"],
        zones={ORIGIN: text},
        extra_config=key_and_acl(KEY) + (module_sections(MODULE) if module else ""),
        zone_options=zone_options(module=module) + KNOT_ZONE_TUNING,
        timeout=60,
    )
    wait_loaded(knot, ORIGIN, timeout=120)
    return knot.process.pid


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process (all threads), from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def dnsperf(node: Node, datafile: Path, seconds: int, pid: int) -> tuple[float, float]:
    """(queries per second, knotd CPU microseconds per query) of one dnsperf run."""
    cpu0 = cpu_seconds(pid)
    out = node.exec(
        ["dnsperf", "-s", "::1", "-d", str(datafile), "-l", str(seconds), "-c", "4", "-q", "200"],
        timeout=seconds + 30,
    ).stdout
    cpu = cpu_seconds(pid) - cpu0
    match = re.search(r"Queries per second:\s+([\d.]+)", out)
    done = re.search(r"Queries completed:\s+(\d+)", out)
    if match is None or done is None:
        raise RuntimeError(f"dnsperf printed no rate:\n{out}")
    return float(match.group(1)), cpu * 1e6 / max(1, int(done.group(1)))


def aaaa(name: str) -> list[str]:
    response = dns.query.udp(dns.message.make_query(name, "AAAA"), "::1", timeout=2)
    return [
        rd.address
        for rrset in response.answer
        for rd in rrset
        if rrset.rdtype == dns.rdatatype.AAAA
    ]


def check_answers(node: Node, names: dict[str, int], want_a: bool) -> None:
    """Every 50th host answers with (or without) its PREFIX_A address."""
    with inside(node):
        for name, ifid in list(names.items())[::50]:
            got = aaaa(f"{name}.{ORIGIN}")
            has_a = f"2001:db8:a::{ifid:x}" in got
            if has_a != want_a or f"2001:db8:b::{ifid:x}" not in got:
                raise RuntimeError(f"{name}: unexpected answer {got}")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks dns", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="1,000 names, short dnsperf runs")
    parser.add_argument("--names", type=int, help="number of hosts (default 10,000; quick 1,000)")
    parser.add_argument("--seconds", type=int, help="dnsperf seconds per round")
    parser.add_argument("--rounds", type=int, help="dnsperf rounds per server")
    args = parser.parse_args(argv)
    count = args.names or (1000 if args.quick else 10000)
    # Short alternating rounds: load from other processes on a shared machine hits both sides.
    seconds = args.seconds or (1 if args.quick else 3)
    rounds = args.rounds or (3 if args.quick else 7)
    if not MODULE.exists():
        print(f"{MODULE} is missing: run scripts/build", file=sys.stderr)
        return 69
    names = hosts(count)
    with Lab() as lab:
        mod, lit = lab.node("mod"), lab.node("lit")
        t0 = time.monotonic()
        mod_pid = start(mod, module=True, names=names)
        lit_pid = start(lit, module=False, names=names)
        print(f"zones with {count} hosts loaded in {time.monotonic() - t0:.1f} s")
        check_answers(mod, names, want_a=True)
        check_answers(lit, names, want_a=True)

        datafile = lab.workdir / "queries.txt"
        datafile.write_text("".join(f"{name}.{ORIGIN} AAAA\n" for name in names))
        qps: dict[str, list[float]] = {"module": [], "literal": []}
        cpu: dict[str, list[float]] = {"module": [], "literal": []}
        for _ in range(rounds):
            for side, node, pid in (("module", mod, mod_pid), ("literal", lit, lit_pid)):
                rate, us = dnsperf(node, datafile, seconds, pid)
                qps[side].append(rate)
                cpu[side].append(us)
        med = {side: statistics.median(v) for side, v in qps.items()}
        med_cpu = {side: statistics.median(v) for side, v in cpu.items()}
        print(
            f"dnsperf AAAA for {count} names, {rounds} alternating rounds x {seconds} s, 4 clients:"
        )
        print("                          median QPS   knotd CPU us/query   QPS per round")
        for side, label in (
            ("module", "mod-mast (synthesised)"),
            ("literal", "literal AAAA records"),
        ):
            rounds_text = [round(q) for q in qps[side]]
            print(f"  {label:22s}  {med[side]:10.0f}   {med_cpu[side]:18.2f}   {rounds_text}")
        print(
            f"  ratio module/literal    {med['module'] / med['literal']:10.3f}   "
            f"{med_cpu['literal'] / med_cpu['module']:18.3f}   (goal >= 0.90; the CPU ratio is "
            "literal/module cost, steadier than QPS on a shared machine)"
        )

        with inside(mod):
            updater = ZoneUpdater("::1", ORIGIN, KEY, timeout=10)
            t0 = time.monotonic()
            updater.set_prefix_status(PREFIX_A, PrefixStatus.DISCOURAGED)
            module_s = time.monotonic() - t0
        check_answers(mod, names, want_a=False)
        with inside(lit):
            updater = ZoneUpdater("::1", ORIGIN, KEY, timeout=10)
            t0 = time.monotonic()
            for name, ifid in names.items():
                updater.remove_host_address(name, f"2001:db8:a::{ifid:x}")
            plain_s = time.monotonic() - t0
        check_answers(lit, names, want_a=False)
        print(f"discourage {PREFIX_A} for {count} names:")
        print(f"  module path: 1 update         {module_s * 1000:10.1f} ms")
        print(f"  plain path:  {count} updates  {plain_s * 1000:10.1f} ms")
        print(f"  ratio plain/module            {plain_s / module_s:10.0f} x")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
