"""A stub LAN for the hook tests: kea-dhcp6 with libdhcp_mast.so in `srv`, hosts on a bridge-less
veth link, two provider prefixes (A, B) as subnet6 of one shared network."""

from __future__ import annotations

import json
import re
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from mast_common.daemons.kea import KeaDhcp6, start_kea_dhcp6
from mast_common.netns import Lab, Node, Process
from mast_common.waiting import wait_for

PREFIX_A = "2001:db8:a::/64"
PREFIX_B = "2001:db8:b::/64"
REMOTE = "2001:db8:ffff::1"  # on srv's loopback: a destination outside both prefixes
PUSH_KEY = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"
PYTHON = sys.executable


@dataclass
class StubLan:
    lab: Lab
    srv: Node
    host: Node
    kea: KeaDhcp6
    library: Path
    state_file: Path

    def start_kea(self, timers: dict[str, int] | None = None, **hook_params: Any) -> KeaDhcp6:
        self.kea = start_kea_dhcp6(
            self.srv, **kea_args(self.library, self.state_file, timers, **hook_params)
        )
        return self.kea

    def start_dhcpcd(self, *, reconfigure_accept: bool = True) -> Process:
        return start_dhcpcd(self.host, "h1-eth", reconfigure_accept=reconfigure_accept)

    def start_mast_client(self) -> tuple[Process, Path]:
        stats = self.lab.workdir / "mast-client.stats.json"
        proc = self.host.spawn(
            [PYTHON, "-m", "mast_client.cli", "run", "-i", "h1-eth", "--stats-file", str(stats),
             "--ask-key-every", "1"],
            label="mast-client",
        )
        wait_for(stats.exists, timeout=15, what="mast-client stats file")
        return proc, stats

    def addresses(self) -> dict[str, dict[str, Any]]:
        return host_addresses(self.host, "h1-eth")


DEFAULT_TIMERS = {
    "renew-timer": 1000,
    "rebind-timer": 2000,
    "preferred-lifetime": 3000,
    "valid-lifetime": 4000,
}


def kea_args(
    library: Path, state_file: Path, timers: dict[str, int] | None = None, **hook_params: Any
) -> dict[str, Any]:
    params = {"push-key": PUSH_KEY, "state-file": str(state_file), **hook_params}
    return {
        "interfaces": ["srv-eth"],
        "hooks": [{"library": str(library), "parameters": params}],
        "extra": {
            "shared-networks": [
                {
                    "name": "lan",
                    "interface": "srv-eth",
                    "subnet6": [
                        {
                            "subnet": PREFIX_A,
                            "id": 1,
                            "pools": [{"pool": "2001:db8:a::100-2001:db8:a::1ff"}],
                        },
                        {"subnet": PREFIX_B, "id": 2},
                    ],
                }
            ],
            **(timers or DEFAULT_TIMERS),
        },
    }


def start_dhcpcd(node: Node, ifname: str, *, reconfigure_accept: bool = True) -> Process:
    """dhcpcd in the foreground, IPv6 only, IA_NA, in a private mount namespace so its
    /var/lib/dhcpcd and /run/dhcpcd (DUID, leases, pid, control socket) belong to this host."""
    work = node.lab.workdir / f"{node.name}-dhcpcd"
    (work / "db").mkdir(parents=True, exist_ok=True)
    (work / "run").mkdir(parents=True, exist_ok=True)
    conf = work / "dhcpcd.conf"
    lines = [
        "noipv4",
        "ipv6only",
        "noipv6rs",  # no router on this link: DHCPv6 starts on its own with ia_na
        "ia_na 1",
        "duid ll",
        "script /bin/true",
    ]
    if reconfigure_accept:
        lines.append("option dhcp6_reconfigure_accept")
    conf.write_text("\n".join(lines) + "\n")
    script = (
        "mkdir -p /run/dhcpcd /var/lib/dhcpcd && "
        f"mount --bind {work}/db /var/lib/dhcpcd && mount --bind {work}/run /run/dhcpcd && "
        f"exec dhcpcd -6 -B -d -f {conf} {ifname}"
    )
    return node.spawn(["unshare", "-m", "sh", "-c", script], label="dhcpcd")


# The address part of Debian's dhclient-script, without its /etc/resolv.conf edits (the hosts
# share the machine's /etc): one call per IAADDR, lifetimes as the server sent them.
DHCLIENT_SCRIPT = """#!/bin/sh
case "$reason" in
  BOUND6|RENEW6|REBIND6|REBOOT6)
    [ -n "$new_ip6_address" ] && ip -6 addr replace "$new_ip6_address/128" dev "$interface" \\
      valid_lft "$new_max_life" preferred_lft "$new_preferred_life" ;;
  EXPIRE6|RELEASE6|STOP6)
    [ -n "$old_ip6_address" ] && ip -6 addr del "$old_ip6_address/128" dev "$interface" ;;
esac
exit 0
"""


def start_dhclient(node: Node, ifname: str) -> Process:
    """ISC dhclient -6 (no Reconfigure support) in the foreground with its own lease file."""
    work = node.lab.workdir / f"{node.name}-dhclient"
    work.mkdir(parents=True, exist_ok=True)
    script = work / "dhclient-script"
    script.write_text(DHCLIENT_SCRIPT)
    script.chmod(0o755)
    return node.spawn(
        ["dhclient", "-6", "-d", "-v", "-lf", str(work / "leases6"), "-pf", str(work / "pid"),
         "-sf", str(script), ifname],
        label="dhclient",
    )


_ADDR_RE = re.compile(r"inet6 (\S+)/(\d+) .*?\n\s+valid_lft (\S+) preferred_lft (\S+)", re.S)


def host_addresses(node: Node, ifname: str) -> dict[str, dict[str, Any]]:
    """Global addresses of `ifname`: {address: {"deprecated": bool, "preferred": str}}."""
    out = node.ip("-6", "addr", "show", "dev", ifname)
    result = {}
    for block in re.split(r"\n(?=\s+inet6 )", out):
        m = _ADDR_RE.search(block)
        if not m or m.group(1).startswith("fe80"):
            continue
        result[m.group(1)] = {
            "deprecated": " deprecated " in block.split("\n")[0] + " ",
            "preferred": m.group(4),
            "valid": m.group(3),
        }
    return result


def in_prefix(addrs: dict[str, Any], prefix: str) -> list[str]:
    import ipaddress

    net = ipaddress.ip_network(prefix)
    return [a for a in addrs if ipaddress.ip_address(a) in net]


def wait_address(
    probe: Callable[[], dict[str, dict[str, Any]]],
    predicate: Callable[[dict[str, dict[str, Any]]], bool],
    *,
    timeout: float,
    what: str,
    poll: float = 0.01,
) -> float:
    """Poll addresses until `predicate` holds; return how long it took."""
    t0 = time.monotonic()
    wait_for(lambda: predicate(probe()), timeout=timeout, what=what, interval=poll)
    return time.monotonic() - t0


def read_stats(path: Path) -> dict[str, Any]:
    try:
        return dict(json.loads(path.read_text()))
    except (OSError, ValueError):
        return {}


@pytest.fixture
def hook_library(build_dir: Path) -> Path:
    lib = build_dir / "dhcp-hooks" / "libdhcp_mast.so"
    if not lib.exists():
        pytest.fail(f"{lib} missing: run scripts/build")
    return lib


@pytest.fixture
def stub_lan_factory(
    netns_lab: Lab, hook_library: Path, require_binaries: Callable[..., None]
) -> Iterator[Callable[..., StubLan]]:
    require_binaries(**{"kea-dhcp6": "kea-dhcp6-server", "dhcpcd": "dhcpcd-base"})

    def make(timers: dict[str, int] | None = None, **hook_params: Any) -> StubLan:
        lab = netns_lab
        srv = lab.node("srv")
        host = lab.node("h1")
        lab.link("srv", "srv-eth", "h1", "h1-eth")
        srv.add_address("srv-eth", "2001:db8:a::1/64")
        srv.add_address("srv-eth", "2001:db8:b::1/64")
        srv.add_address("lo", f"{REMOTE}/128")
        # Link-local addresses must exist before Kea opens its sockets.
        wait_for(lambda: "fe80" in srv.ip("-6", "addr", "show", "dev", "srv-eth"), timeout=10,
                 what="srv link-local address")
        srv_ll = re.search(r"inet6 (fe80::\S+)/64", srv.ip("-6", "addr", "show", "dev", "srv-eth"))
        assert srv_ll
        # No router advertisements here: a static default route stands in for the RA.
        host.ip("-6", "route", "add", "default", "via", srv_ll.group(1), "dev", "h1-eth")
        state = lab.workdir / "mast-prefix-state.json"
        kea = start_kea_dhcp6(srv, **kea_args(hook_library, state, timers, **hook_params))
        return StubLan(lab, srv, host, kea, hook_library, state)

    yield make
