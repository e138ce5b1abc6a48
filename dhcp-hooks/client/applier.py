"""Apply verified prefix statuses to the host's addresses over netlink (pyroute2).

discouraged -> preferred_lft 0 on every address inside the prefix, valid_lft untouched, so
live connections go on but new ones pick another source; preferred -> preferred_lft back up
to the remaining valid lifetime; withdrawn -> the address is removed.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from typing import Any

from mast_client.wire import PrefixEntry
from mast_common.log import get_logger
from mast_common.prefix import PrefixStatus
from pyroute2 import IPRoute

log = get_logger(__name__)

INFINITY = 0xFFFFFFFF
# Flags the kernel computes itself; echoing them back in a replace would be refused or wrong.
_KERNEL_FLAGS = 0x01 | 0x08 | 0x20 | 0x40 | 0x80  # secondary, dadfailed, deprecated, tentative, permanent


@dataclass(frozen=True)
class AddressChange:
    address: str
    prefixlen: int
    action: str  # "deprecated", "restored", "removed", "unchanged"


def _cacheinfo(msg: Any) -> tuple[int, int]:
    info = msg.get_attr("IFA_CACHEINFO")
    if info is None:
        return INFINITY, INFINITY
    return int(info["ifa_preferred"]), int(info["ifa_valid"])


class NetlinkApplier:
    """Changes addresses on one interface; every change is logged."""

    def __init__(self, interface: str) -> None:
        self.interface = interface
        self._ipr = IPRoute()
        found = self._ipr.link_lookup(ifname=interface)
        if not found:
            self._ipr.close()
            raise LookupError(f"no interface {interface!r} in this namespace")
        self.index = int(found[0])

    def close(self) -> None:
        self._ipr.close()

    def __enter__(self) -> NetlinkApplier:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def addresses_in(self, prefix: ipaddress.IPv6Network) -> list[tuple[str, int, Any]]:
        out = []
        for msg in self._ipr.get_addr(family=10, index=self.index):
            addr = msg.get_attr("IFA_ADDRESS")
            if addr and ipaddress.IPv6Address(addr) in prefix:
                out.append((str(addr), int(msg["prefixlen"]), msg))
        return out

    def apply(self, entry: PrefixEntry) -> list[AddressChange]:
        changes = []
        for addr, plen, msg in self.addresses_in(entry.prefix):
            if ipaddress.IPv6Address(addr).is_link_local:
                continue
            preferred, valid = _cacheinfo(msg)
            flags = int(msg.get_attr("IFA_FLAGS") or msg["flags"]) & ~_KERNEL_FLAGS
            if entry.status is PrefixStatus.WITHDRAWN:
                self._ipr.addr("del", index=self.index, address=addr, prefixlen=plen)
                action = "removed"
            elif entry.status is PrefixStatus.DISCOURAGED:
                if preferred == 0:
                    action = "unchanged"
                else:
                    new_valid = valid
                    if entry.valid_lifetime:
                        new_valid = min(valid, entry.valid_lifetime)
                    self._replace(addr, plen, 0, new_valid, flags)
                    action = "deprecated"
            else:
                target = valid
                if entry.preferred_lifetime and entry.preferred_lifetime != INFINITY:
                    target = min(valid, entry.preferred_lifetime)
                if preferred >= target or (preferred != 0 and preferred == INFINITY):
                    action = "unchanged"
                else:
                    self._replace(addr, plen, target, valid, flags)
                    action = "restored"
            change = AddressChange(addr, plen, action)
            log.info(
                "address." + action,
                interface=self.interface,
                address=addr,
                prefix=str(entry.prefix),
                status=str(entry.status),
            )
            changes.append(change)
        return changes

    def _replace(self, addr: str, plen: int, preferred: int, valid: int, flags: int) -> None:
        self._ipr.addr(
            "replace",
            index=self.index,
            address=addr,
            prefixlen=plen,
            preferred=preferred,
            valid=valid,
            IFA_FLAGS=flags,
        )
