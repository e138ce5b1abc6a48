"""`make demo`: run the MAST toolkit's main job on embedded defaults.

Today: bring up the daemons MAST drives (BIRD, Kea DHCPv6, Knot, snmpd) in network namespaces,
show that each answers on its control channel, and tear everything down. Later issues extend
this with the failover lab and a RIB report.
"""

from __future__ import annotations

import sys
import time

from mast_common.daemons import start_bird, start_kea_dhcp6, start_knot, start_snmpd
from mast_common.daemons.snmpd import SYS_DESCR
from mast_common.netns import Lab, NetnsError

ZONE = """$ORIGIN stub.example.
$TTL 60
@   SOA ns1 hostmaster 1 3600 600 86400 60
@   NS  ns1
ns1 AAAA 2001:db8:a::53
"""


def main() -> int:
    t0 = time.monotonic()
    try:
        with Lab() as lab:
            lab.link("router", "r-lan", "server", "s-lan")
            router, server = lab.nodes["router"], lab.nodes["server"]
            router.add_address("r-lan", "2001:db8:a::1/64")
            server.add_address("s-lan", "2001:db8:a::53/64")
            bird = start_bird(router, router_id="192.0.2.1")
            print("bird   :", bird.birdc("show", "status").splitlines()[-1].strip())
            snmpd = start_snmpd(router)
            print("snmpd  :", snmpd.get(SYS_DESCR).strip())
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
            print("kea    :", kea.command("version-get")["text"])
            knot = start_knot(server, listen=["2001:db8:a::53@53"], zones={"stub.example.": ZONE})
            print("knot   :", knot.knotc("zone-status", "stub.example.").strip())
            answer = router.exec(["kdig", "+short", "@2001:db8:a::53", "AAAA", "ns1.stub.example."])
            print("dns    : ns1.stub.example. AAAA", answer.stdout.strip())
    except NetnsError as exc:
        print(f"demo failed: {exc}", file=sys.stderr)
        return 1
    print(f"demo: all daemons answered; torn down in {time.monotonic() - t0:.1f} s total")
    return 0


if __name__ == "__main__":
    sys.exit(main())
