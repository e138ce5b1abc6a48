"""SRMS failover latency: trap received → every action complete (Kea hook, Knot, router agent).

Real processes in namespaces: snmptrap (net-snmp) on border router r1 sends linkDown/linkUp
v2c traps for the access link, alternating, to a running `srms run`; hold-down 0, so each trap
is one transition. For each transition the latency is the slowest peer's completion time minus
the moment SRMS received the trap (SRMS's own `action.done` records). Printed: median, p99, max,
each peer's median, and the ratio to a serial dispatcher (the sum of the per-peer medians:
what SRMS would take if it told the peers one after another) and to the 1 s budget.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections import defaultdict
from typing import Any

from mast_common.netns import Lab
from mast_common.waiting import wait_for

LINK_DOWN = ".1.3.6.1.6.3.1.1.5.3"
LINK_UP = ".1.3.6.1.6.3.1.1.5.4"


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    k = max(0, min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1))))
    return ordered[k]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="bench_srms", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="20 transitions instead of 100")
    parser.add_argument("-n", "--transitions", type=int, default=None)
    args = parser.parse_args(argv)
    count = args.transitions or (20 if args.quick else 100)

    from tests.integration.srms import srmslab as L

    missing = [
        what
        for what, ok in (
            ("Kea hook", L.hook_library() is not None),
            ("Knot module", L.knot_module() is not None),
            ("mast_dns", L.mast_dns_available()),
            ("router agent", L.router_agent_available()),
        )
        if not ok
    ]
    with Lab() as lab:
        stub = L.build_stub_lab(lab)
        L.add_lan(stub)
        body = L.providers_block(
            'router = "fd00:ff::1", if_name = "acca"', 'router = "fd00:ff::1", if_name = "accb"'
        ) + L.snmp_block(community="public")
        peers = []
        if "Kea hook" not in missing:
            kea = L.start_kea(stub)
            body += f'[kea]\nsockets = ["{kea.socket}"]\n\n'
            peers.append("kea")
        if "Knot module" not in missing and "mast_dns" not in missing:
            L.start_knot(stub)
            body += L.dns_block() + "\n"
            peers.append("dns")
        if "router agent" not in missing:
            L.start_router_agent(stub)
            body += L.routers_block()
            peers.append("netconf")
        if missing:
            print(f"note: running without {', '.join(missing)} (not built yet)")
        s = stub.start_srms(stub.srms_config(body, hold_down=0.0))
        # The start-up resync opens every peer session, as in production before any failure.
        wait_for(lambda: not s.status()["pending_actions"], timeout=30, what="start-up resync")
        idx = stub.if_index("acca")
        sink = f"udp6:[{L.OPS_MGMT}]:{L.TRAP_PORT}"

        def trap(kind: str) -> None:
            stub.r1.exec(
                [
                    "snmptrap",
                    "-v2c",
                    "-c",
                    "public",
                    sink,
                    "",
                    kind,
                    f".1.3.6.1.2.1.2.2.1.1.{idx}",
                    "i",
                    str(idx),
                    f".1.3.6.1.2.1.31.1.1.1.1.{idx}",
                    "s",
                    "acca",
                ],
                timeout=10,
            )

        def last_transition() -> tuple[int, bool]:
            st = s.status()
            ts = st["transitions"]
            if not ts:
                return 0, True
            return int(ts[0]["id"]), bool(ts[0]["complete"]) and not st["pending_actions"]

        print(f"SRMS failover chain, {count} transitions, peers: {', '.join(peers) or 'none'}")
        t_start = time.time()
        for i in range(count):
            before, _ = last_transition()
            trap(LINK_DOWN if i % 2 == 0 else LINK_UP)

            def complete(before: int = before) -> bool:
                last, done = last_transition()
                return last > before and done

            wait_for(complete, timeout=20, what=f"transition {i + 1} complete", interval=0.01)
        wall = time.time() - t_start

        per_transition: dict[int, list[dict[str, Any]]] = defaultdict(list)
        for rec in s.events("action.done"):
            per_transition[int(rec["transition"])].append(rec)
        chains = [
            max(r["since_event_ms"] for r in recs)
            for recs in per_transition.values()
            if len(recs) == len(peers)
        ]
        by_peer: dict[str, list[float]] = defaultdict(list)
        for recs in per_transition.values():
            for r in recs:
                by_peer[r["peer"].split(":")[0]].append(float(r["took_ms"]))
        if not chains:
            print("no complete transitions measured")
            return 1
        print("per transition (ms):", " ".join(f"{c:.0f}" for c in chains))
        med, p99 = statistics.median(chains), percentile(chains, 99)
        print(f"transitions measured: {len(chains)} in {wall:.1f} s")
        print(
            f"trap received → all actions complete: median {med:.1f} ms, p99 {p99:.1f} ms,"
            f" max {max(chains):.1f} ms"
        )
        serial = 0.0
        for peer, values in sorted(by_peer.items()):
            m = statistics.median(values)
            serial += m
            print(f"  {peer:8} action median {m:6.1f} ms  p99 {percentile(values, 99):6.1f} ms")
        if serial:
            print(
                f"ratio chain median / serial dispatch estimate ({serial:.1f} ms): {med / serial:.2f}"
            )
        print(f"ratio p99 / 1 s budget: {p99 / 1000:.3f}")
        return 0 if p99 < 1000 else 1
