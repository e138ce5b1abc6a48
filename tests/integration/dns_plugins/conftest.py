"""A knotd in a lab namespace serving one zone with mod-mast, and a client inside the namespace."""

from __future__ import annotations

import base64
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import dns.message
import dns.query
import dns.rdatatype
import pytest
from mast_common.daemons import start_knot
from mast_common.daemons.knot import Knot
from mast_common.netns import Lab, Node
from mast_common.nsenter import inside
from mast_dns.knotconf import key_and_acl, module_sections, wait_loaded, zone_options, zone_text
from mast_dns.update import TsigKey, ZoneUpdater

ORIGIN = "lab.mast."
SERVER = "::1"
KEY = TsigKey("srms-key.", base64.b64encode(b"mast test key, 32 bytes long!!!!").decode())
PREFIX_A = "2001:db8:a::/64"
PREFIX_B = "2001:db8:b::/64"
HOSTS = {"h1": 0x10, "h2": 0x1_0000_0000_0020, "h3": 0xABCD}


@dataclass
class DnsLab:
    lab: Lab
    node: Node
    knot: Knot

    def updater(self, key: TsigKey | None = KEY, **kw: float | int) -> ZoneUpdater:
        return ZoneUpdater(SERVER, ORIGIN, key, timeout=kw.pop("timeout", 1.0), **kw)  # type: ignore[arg-type]

    def aaaa(self, name: str) -> list[str]:
        """The AAAA answer for `name`, in wire order (queried from inside the namespace)."""
        query = dns.message.make_query(f"{name}.{ORIGIN}", dns.rdatatype.AAAA)
        response = dns.query.udp(query, SERVER, timeout=2)
        return [
            rd.address
            for rrset in response.answer
            for rd in rrset
            if rrset.rdtype == dns.rdatatype.AAAA
        ]

    def log(self) -> str:
        return self.knot.process.log()


@pytest.fixture
def module_path(build_dir: Path) -> Path:
    path = build_dir / "dns-plugins" / "mod_mast.so"
    if not path.exists():
        pytest.fail(f"{path} is missing: run scripts/build")
    return path


@pytest.fixture
def start_dns(
    netns_lab: Lab, module_path: Path, require_binaries: Callable[..., None]
) -> Iterator[Callable[..., DnsLab]]:
    """start_dns(zone=..., module=True) -> DnsLab; the calling thread runs inside the node."""
    require_binaries(knotd="knot", knotc="knot")
    entered: list[object] = []

    def start(
        *,
        zone: str | None = None,
        module: bool = True,
        lima: bool = False,
        extra_zone_options: str = "",
    ) -> DnsLab:
        node = netns_lab.node("dns")
        text = zone or zone_text(
            ORIGIN, hosts=HOSTS, prefixes=[(PREFIX_A, "preferred"), (PREFIX_B, "preferred")]
        )
        knot = start_knot(
            node,
            listen=[f"{SERVER}@53"],
            zones={ORIGIN: text},
            extra_config=key_and_acl(KEY)
            + (module_sections(module_path, lima=lima) if module else ""),
            zone_options=zone_options(module=module) + extra_zone_options,
        )
        wait_loaded(knot, ORIGIN)
        ctx = inside(node)
        ctx.__enter__()
        entered.append(ctx)
        return DnsLab(netns_lab, node, knot)

    yield start
    for ctx in entered:
        ctx.__exit__(None, None, None)  # type: ignore[attr-defined]
