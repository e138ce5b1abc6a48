"""End to end with every real piece: snmpd on border router r1 → SRMS → kea-dhcp6 + MAST hook,
knotd + mod-mast (RFC 2136/TSIG), itmp router-agent (NETCONF) — each asserted on the component."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from mast_common.netns import Lab
from mast_common.waiting import wait_for
from srmslab import (
    PREFIX_A,
    PREFIX_B,
    PREFIX_C,
    SRMS,
    Agent,
    StubLab,
    aaaa,
    add_lan,
    build_stub_lab,
    dns_block,
    hook_library,
    host_address,
    kea_statuses,
    knot_module,
    mast_dns_available,
    print_timeline,
    providers_block,
    require,
    router_address_flags,
    router_agent_available,
    routers_block,
    snmp_block,
    start_kea,
    start_knot,
    start_router_agent,
    wait_status,
)

pytestmark = pytest.mark.integration

HOLD_DOWN = 3.0


@dataclass
class Chain:
    stub: StubLab
    kea: Any
    knot: Any
    agent: Agent
    config_body: str


def require_peers() -> None:
    require("the Kea hook (build/dhcp-hooks/libdhcp_mast.so)", hook_library() is not None)
    require("the Knot module (build/dns-plugins/mod_mast.so)", knot_module() is not None)
    require("mast_dns.update (dns-plugins/client)", mast_dns_available())
    require("itmp router-agent", router_agent_available())


@pytest.fixture
def chain(netns_lab: Lab, require_binaries: Callable[..., None]) -> Iterator[Chain]:
    require_peers()
    require_binaries(
        snmpd="snmpd", kdig="knot-dnsutils", knotd="knot", **{"kea-dhcp6": "kea-dhcp6-server"}
    )
    stub = build_stub_lab(netns_lab)
    add_lan(stub, (PREFIX_A, PREFIX_B, PREFIX_C))
    stub.r1.ip("-6", "addr", "del", f"{PREFIX_C.split('/')[0]}1/64", "dev", "lan0")
    kea = start_kea(stub)
    knot = start_knot(stub)
    agent = start_router_agent(stub)
    body = (
        providers_block(
            'router = "fd00:ff::1", if_name = "acca"', 'router = "fd00:ff::1", if_name = "accb"'
        )
        + snmp_block(community="public")
        + f'[kea]\nsockets = ["{kea.socket}"]\ntimeout = 2.0\n\n'
        + dns_block(max_ttl=2.0)
        + "\n"
        + routers_block()
    )
    yield Chain(stub, kea, knot, agent, body)


def peers_show(c: Chain, prefix: str, status: str) -> bool:
    """Every peer, asked directly, reports `prefix` with `status`."""
    if kea_statuses(c.kea).get(prefix) != status:
        return False
    addr = host_address(prefix)
    served = addr in aaaa(c.stub)
    if served != (status == "preferred"):
        return False
    flags = router_address_flags(c.stub, f"{prefix.split('/')[0]}1")
    if status == "withdrawn":
        return flags is None
    return flags is not None and (("deprecated" in flags) == (status == "discouraged"))


def test_access_link_down_whole_chain_within_1s_then_restore(chain: Chain) -> None:
    c = chain
    s = c.stub.start_srms(c.stub.srms_config(c.config_body, hold_down=HOLD_DOWN))
    c.stub.start_snmpd(community="public")
    wait_for(lambda: not s.status()["pending_actions"], timeout=20, what="start-up resync done")
    assert aaaa(c.stub) == sorted([host_address(PREFIX_A), host_address(PREFIX_B)])
    time.sleep(1.5)

    t_down = time.time()
    c.stub.r1.set_link("acca", False)
    wait_for(
        lambda: peers_show(c, PREFIX_A, "discouraged"),
        timeout=15,
        what="A discouraged at every peer",
    )
    t_seen = time.time()
    assert peers_show(c, PREFIX_B, "preferred")
    [ev] = [e for e in s.events("link.event") if e["state"] == "down"]
    [tr] = [e for e in s.events("prefix.transition") if e["new"] == "discouraged"]
    done = [
        e
        for e in s.events("action.done")
        if e["prefix"] == PREFIX_A and e["status"] == "discouraged"
    ]
    assert {d["peer"].split(":")[0] for d in done} == {"kea", "dns", "netconf"}
    marks = [
        ("ip link set acca down (r1)", t_down),
        ("trap received, link.event", ev["ts"]),
        ("transition persisted", tr["ts"]),
    ]
    marks += [(f"{d['peer']} done ({d['took_ms']} ms)", d["ts"]) for d in done]
    marks.append(("asserted on kea/knot/router", t_seen))
    print_timeline("access link down → discouraged everywhere", marks)
    chain_s = max(d["ts"] for d in done) - ev["ts"]
    print(f"trap → all actions complete: {chain_s * 1000:.1f} ms")
    assert chain_s < 1.0

    t_up = time.time()
    c.stub.r1.set_link("acca", True)
    wait_for(
        lambda: [e for e in s.events("link.event") if e["state"] == "up"], timeout=10, what="linkUp"
    )
    assert peers_show(c, PREFIX_A, "discouraged")
    wait_for(lambda: peers_show(c, PREFIX_A, "preferred"), timeout=20, what="A preferred again")
    up_ev = [e for e in s.events("link.event") if e["state"] == "up"][-1]
    restore = [e for e in s.events("prefix.transition") if e["new"] == "preferred"][-1]
    print_timeline(
        "link up → restored after hold-down",
        [("ip link set acca up", t_up), ("linkUp trap", up_ev["ts"]), ("restored", restore["ts"])],
    )
    assert restore["ts"] - up_ev["ts"] >= HOLD_DOWN - 0.05  # log stamps come after the clock read


def test_kill9_with_actions_pending_then_restart_completes(chain: Chain) -> None:
    c = chain
    cfg = c.stub.srms_config(c.config_body, hold_down=HOLD_DOWN)
    s = c.stub.start_srms(cfg)
    c.stub.start_snmpd(community="public")
    wait_for(lambda: not s.status()["pending_actions"], timeout=20, what="start-up resync done")
    # All three peers unreachable: the transition is persisted, its actions cannot complete.
    c.kea.process.stop()
    c.knot.process.stop()
    c.agent.process.stop()
    c.stub.r1.set_link("acca", False)
    wait_status(s, PREFIX_A, "discouraged")
    wait_for(lambda: len(s.status()["pending_actions"]) == 3, timeout=10, what="3 pending actions")
    s.process.stop(sig=9)
    assert not s.process.alive()
    # Peers back (same sockets, same addresses), SRMS restarted from its database.
    c.kea = start_kea(c.stub)
    c.knot = start_knot(c.stub)
    c.agent = start_router_agent(c.stub)
    s2 = c.stub.start_srms(cfg)
    assert s2.prefix_status(PREFIX_A) == "discouraged"
    wait_for(
        lambda: peers_show(c, PREFIX_A, "discouraged"),
        timeout=30,
        what="actions completed after restart",
    )
    wait_for(lambda: not s2.status()["pending_actions"], timeout=10, what="nothing pending")


def test_kea_down_during_transition_is_retried(chain: Chain) -> None:
    c = chain
    s = c.stub.start_srms(c.stub.srms_config(c.config_body, hold_down=HOLD_DOWN))
    c.stub.start_snmpd(community="public")
    wait_for(lambda: not s.status()["pending_actions"], timeout=20, what="start-up resync done")
    c.kea.process.stop()
    c.stub.r1.set_link("acca", False)
    wait_for(lambda: aaaa(c.stub) == [host_address(PREFIX_B)], timeout=15, what="knot updated")

    def kea_pending() -> bool:
        pending = s.status()["pending_actions"]
        return (
            len(pending) == 1
            and pending[0]["target"].startswith("kea:")
            and pending[0]["attempts"] >= 2
        )

    wait_for(kea_pending, timeout=15, what="kea action retried")
    print("pending while kea is down:", s.status()["pending_actions"])
    c.kea = start_kea(c.stub)
    wait_for(lambda: peers_show(c, PREFIX_A, "discouraged"), timeout=30, what="kea caught up")


def test_renumber_end_to_end_short_ttl(chain: Chain) -> None:
    c = chain
    cfg = c.stub.srms_config(c.config_body, hold_down=HOLD_DOWN)
    s = c.stub.start_srms(cfg)
    wait_for(lambda: not s.status()["pending_actions"], timeout=20, what="start-up resync done")
    c.stub.r1.add_address("lan0", f"{PREFIX_C.split('/')[0]}1/64")
    t0 = time.time()
    out = c.stub.ops.exec(
        [SRMS, "-c", str(cfg), "renumber", "--add", PREFIX_C, "--retire", PREFIX_A, "--wait"],
        timeout=90,
    )
    t1 = time.time()
    print(out.stdout)
    assert "publishing" in out.stdout and "done" in out.stdout
    assert t1 - t0 >= 2.0  # waited the longest DNS TTL (max_ttl = 2 s)
    assert peers_show(c, PREFIX_C, "preferred")
    assert kea_statuses(c.kea)[PREFIX_A] == "withdrawn"
    assert aaaa(c.stub) == sorted([host_address(PREFIX_B), host_address(PREFIX_C)])
    assert router_address_flags(c.stub, f"{PREFIX_A.split('/')[0]}1") is None
    status = c.stub.ops.exec([SRMS, "-c", str(cfg), "status"]).stdout
    print(status)
    assert "renumberings:" in status and "done" in status
