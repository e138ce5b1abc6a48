"""The other event sources with real processes: netlink (SRMS on the border router itself) and
BIRD's BGP session state over its control socket (BIRD 2 on r1 and on provider A's router)."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest
from mast_common.daemons import start_bird
from mast_common.netns import Lab
from mast_common.waiting import wait_for
from srmslab import (
    PREFIX_A,
    PREFIX_B,
    build_stub_lab,
    print_timeline,
    providers_block,
    wait_status,
)

pytestmark = pytest.mark.integration


def test_netlink_on_the_router(netns_lab: Lab) -> None:
    lab = build_stub_lab(netns_lab)
    lab.ops = lab.r1  # SRMS runs on r1
    body = providers_block('netlink_ifname = "acca"', 'netlink_ifname = "accb"') + "[netlink]\n"
    s = lab.start_srms(lab.srms_config(body, hold_down=1.0))
    t0 = time.time()
    lab.r1.set_link("acca", False)
    t1 = wait_status(s, PREFIX_A, "discouraged", timeout=5)
    [ev] = [e for e in s.events("link.event") if e["state"] == "down"]
    print_timeline(
        "netlink",
        [("ip link set acca down", t0), ("netlink event handled", ev["ts"]), ("status seen", t1)],
    )
    assert ev["ts"] - t0 < 1.0
    assert s.prefix_status(PREFIX_B) == "preferred"
    # The veth peer going down takes the carrier away too.
    netns_lab.nodes["pb"].set_link("eth0", False)
    wait_status(s, PREFIX_B, "discouraged", timeout=5)
    lab.r1.set_link("acca", True)
    wait_status(s, PREFIX_A, "preferred", timeout=10)


def bgp(name: str, local: str, peer: str, local_as: int, peer_as: int, ifname: str) -> str:
    return f"""
protocol bgp {name} {{
    local {local} as {local_as};
    neighbor {peer} as {peer_as};
    interface "{ifname}";
    direct;
    hold time 6;
    connect retry time 1;
    error wait time 1, 2;
    ipv6 {{ import none; export none; }};
}}
"""


def test_bird_bgp_session_state(netns_lab: Lab, require_binaries: Callable[..., None]) -> None:
    require_binaries(bird="bird2", birdc="bird2")
    lab = build_stub_lab(netns_lab)
    pa = netns_lab.nodes["pa"]
    for node in (lab.r1, pa):
        # Linux flushes static IPv6 addresses of a link that goes down, unless told not to.
        node.exec(["sysctl", "-qw", "net.ipv6.conf.all.keep_addr_on_down=1"])
    lab.r1.add_address("acca", "fd00:a::1/64")
    pa.add_address("eth0", "fd00:a::2/64")
    bird_r1 = start_bird(
        lab.r1,
        router_id="10.0.0.1",
        body=bgp("provider_a", "fd00:a::1", "fd00:a::2", 64512, 65001, "acca"),
    )
    start_bird(
        pa,
        router_id="10.0.0.2",
        body=bgp("to_stub", "fd00:a::2", "fd00:a::1", 65001, 64512, "eth0"),
    )
    wait_for(
        lambda: "Established" in bird_r1.birdc("show", "protocols", "provider_a"),
        timeout=30,
        what="BGP Established",
    )
    body = providers_block('bird_protocol = "provider_a"', 'bird_protocol = "provider_b"')
    body += f'[bird]\nsocket = "{bird_r1.socket}"\npoll_interval = 0.2\n'
    s = lab.start_srms(lab.srms_config(body, hold_down=1.0))
    # provider_b is not configured in BIRD at all: reported down, so B is discouraged.
    wait_status(s, PREFIX_B, "discouraged", timeout=5)
    assert s.prefix_status(PREFIX_A) == "preferred"
    t0 = time.time()
    pa.set_link("eth0", False)  # carrier lost: `direct` sessions check the link
    t1 = wait_status(s, PREFIX_A, "discouraged", timeout=15)
    print_timeline("bird", [("provider's side of the access link down", t0), ("status seen", t1)])
    pa.set_link("eth0", True)
    wait_for(
        lambda: "Established" in bird_r1.birdc("show", "protocols", "provider_a"),
        timeout=30,
        what="BGP re-established",
    )
    up_at = time.time()
    assert s.prefix_status(PREFIX_A) == "discouraged"
    t2 = wait_status(s, PREFIX_A, "preferred", timeout=10)
    assert t2 - up_at >= 0.7  # hold-down 1 s, minus one poll interval
