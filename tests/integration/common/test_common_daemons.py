"""The real daemons MAST drives start inside lab namespaces, answer, and leave nothing behind."""

from __future__ import annotations

import os
from collections.abc import Callable

import pytest
from mast_common.daemons import start_bird, start_kea_dhcp6, start_knot, start_snmpd
from mast_common.daemons.snmpd import SYS_DESCR
from mast_common.netns import Lab, list_namespaces
from mast_common.waiting import wait_for

pytestmark = pytest.mark.integration

ZONE = """$ORIGIN stub.example.
$TTL 60
@   SOA ns1 hostmaster 1 3600 600 86400 60
@   NS  ns1
ns1 AAAA 2001:db8:a::53
"""


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
        with open(f"/proc/{pid}/status") as fh:
            return "State:\tZ" not in fh.read()
    except (ProcessLookupError, FileNotFoundError):
        return False


def test_bird_kea_knot_snmpd_answer_and_leave_nothing(
    require_root: None, require_binaries: Callable[..., None]
) -> None:
    require_binaries(
        bird="bird2",
        birdc="bird2",
        **{"kea-dhcp6": "kea-dhcp6-server"},
        knotd="knot",
        knotc="knot",
        kdig="knot-dnsutils",
        snmpd="snmpd",
        snmpget="snmp",
    )
    lab = Lab()
    try:
        lab.link("router", "r-lan", "server", "s-lan")
        router, server = lab.nodes["router"], lab.nodes["server"]
        router.add_address("r-lan", "2001:db8:a::1/64")
        server.add_address("s-lan", "2001:db8:a::53/64")

        bird = start_bird(router, router_id="192.0.2.1")
        assert "Daemon is up and running" in bird.birdc("show", "status")

        kea = start_kea_dhcp6(
            server,
            interfaces=["s-lan"],
            subnets=[
                {
                    "id": 1,
                    "subnet": "2001:db8:a::/64",
                    "interface": "s-lan",
                    "pools": [{"pool": "2001:db8:a::1000-2001:db8:a::1fff"}],
                }
            ],
        )
        version = kea.command("version-get")
        assert version["result"] == 0 and version["text"].startswith("2.")

        knot = start_knot(server, listen=["2001:db8:a::53@53"], zones={"stub.example.": ZONE})
        assert "role: master" in knot.knotc("zone-status", "stub.example.")
        answer = router.exec(["kdig", "+short", "@2001:db8:a::53", "AAAA", "ns1.stub.example."])
        assert answer.stdout.strip() == "2001:db8:a::53"

        snmpd = start_snmpd(router)
        assert "MAST test router router" in snmpd.get(SYS_DESCR)

        pids = router.pids() + server.pids()
        assert len(pids) >= 4
        names = lab.namespaces()
    finally:
        lab.close()
    assert not set(names) & set(list_namespaces())
    wait_for(lambda: not any(alive(p) for p in pids), timeout=10, what="daemons to exit")


def test_daemon_that_fails_to_start_reports_its_log(netns_lab: Lab) -> None:
    from mast_common.netns import NetnsError

    node = netns_lab.node("router")
    with pytest.raises(NetnsError, match=r"bird exited with .* during start-up"):
        start_bird(node, router_id="192.0.2.1", body="protocol nonsense {}", timeout=10)
