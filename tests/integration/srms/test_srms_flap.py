"""Flap damping with real link events: 10 flaps in 5 s → one discourage and one restore."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest
from mast_common.netns import Lab
from mast_common.waiting import wait_for
from srmslab import PREFIX_A, SrmsProcess, StubLab, build_stub_lab, providers_block, snmp_block

pytestmark = pytest.mark.integration
HOLD_DOWN = 2.0
SNMP_HOLD_DOWN = 6.0


def flap(stub: StubLab, times: int = 10, period: float = 0.5) -> float:
    """Flap acca `times` times on a fixed schedule (absolute deadlines: `ip` start-up time on a
    loaded machine does not stretch the burst); return when the last up was done."""
    t0 = time.time()
    for i in range(times):
        for offset, up in ((0.0, False), (period / 2, True)):
            delay = t0 + i * period + offset - time.time()
            if delay > 0:
                time.sleep(delay)
            stub.r1.set_link("acca", up)
    took = time.time() - t0
    assert took <= times * period + 1.0, f"flapping took {took:.1f} s on this loaded machine"
    return time.time()


def transitions_of_a(s: SrmsProcess) -> list[str]:
    return [t["new"] for t in reversed(s.status()["transitions"]) if t["prefix"] == PREFIX_A]


def settle(s: SrmsProcess, last_up: float, min_gap: float) -> list[str]:
    wait_for(lambda: s.prefix_status(PREFIX_A) == "preferred", timeout=30, what="restored")
    time.sleep(1.0)
    restored = [e["ts"] for e in s.events("prefix.transition") if e["new"] == "preferred"][-1]
    assert restored - last_up >= min_gap
    return transitions_of_a(s)


def test_flapping_netlink(netns_lab: Lab) -> None:
    stub = build_stub_lab(netns_lab)
    stub.ops = stub.r1  # SRMS on the router: every flap is seen
    body = providers_block('netlink_ifname = "acca"', 'netlink_ifname = "accb"') + "[netlink]\n"
    s = stub.start_srms(stub.srms_config(body, hold_down=HOLD_DOWN))
    last_up = flap(stub)
    # netlink sees the last up at once: the restore comes a full hold-down later.
    assert settle(s, last_up, HOLD_DOWN - 0.2) == ["discouraged", "preferred"]
    downs = [e for e in s.events("link.event") if e["state"] == "down"]
    print(f"netlink: {len(downs)} link-down events → transitions {transitions_of_a(s)}")
    assert len(downs) == 10
    assert s.status()["links"][0]["flaps"] == 10


def test_flapping_snmpd(netns_lab: Lab, require_binaries: Callable[..., None]) -> None:
    require_binaries(snmpd="snmpd")
    stub = build_stub_lab(netns_lab)
    body = providers_block(
        'router = "fd00:ff::1", if_name = "acca"', 'router = "fd00:ff::1", if_name = "accb"'
    ) + snmp_block(community="public")
    # snmpd samples ifOperStatus once a second, so it sees a random subset of the flaps (it may
    # see the link "up" for 2 s in the middle of the burst): the hold-down has to outlast the
    # burst, as operators size it against their links' flapping.
    s = stub.start_srms(stub.srms_config(body, hold_down=SNMP_HOLD_DOWN))
    stub.start_snmpd(community="public")
    time.sleep(1.5)
    last_up = flap(stub)
    assert settle(s, last_up, 0.0) == ["discouraged", "preferred"]
    downs = [e for e in s.events("link.event") if e["state"] == "down"]
    print(f"snmpd: {len(downs)} linkDown traps for 10 flaps → {transitions_of_a(s)}")
    assert len(downs) >= 1
