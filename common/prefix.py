"""The prefix model: a provider-aggregatable IPv6 prefix, its provider, and its status.

Every component speaks of prefixes the same way: SRMS's state machine, the Kea hook's control
command, the Knot zone's APL record and the push message all carry one of these statuses.
"""

from __future__ import annotations

import enum
import ipaddress
from dataclasses import dataclass

IPv6Network = ipaddress.IPv6Network
IPv6Address = ipaddress.IPv6Address


class PrefixStatus(enum.StrEnum):
    """How hosts may use addresses of a prefix (DESIGN.md: discouraged is not unreachable)."""

    PREFERRED = "preferred"  # normal use
    DISCOURAGED = "discouraged"  # keep for live connections; not for new ones
    WITHDRAWN = "withdrawn"  # gone (renumbering): remove addresses


class PrefixError(ValueError):
    """A string is not a usable stub prefix, address or interface ID."""


def parse_prefix(text: str, *, max_len: int = 64) -> IPv6Network:
    """Parse a stub prefix: IPv6, host bits clear, no longer than `max_len` (IFIDs are 64 bits)."""
    try:
        net = ipaddress.ip_network(text, strict=True)
    except ValueError as exc:
        raise PrefixError(f"not an IPv6 prefix: {text!r} ({exc})") from None
    if not isinstance(net, IPv6Network):
        raise PrefixError(f"not an IPv6 prefix: {text!r} (IPv4)")
    if net.prefixlen > max_len:
        raise PrefixError(f"prefix {text} is longer than /{max_len}: no room for an interface ID")
    return net


def interface_id(address: IPv6Address | str, prefixlen: int = 64) -> int:
    """The interface ID of `address`: its bits past `prefixlen`."""
    addr = IPv6Address(address) if isinstance(address, str) else address
    return int(addr) & ((1 << (128 - prefixlen)) - 1)


def address_in(prefix: IPv6Network, ifid: int) -> IPv6Address:
    """The address with interface ID `ifid` inside `prefix` (the sibling of a MAST address)."""
    host_bits = 128 - prefix.prefixlen
    if ifid < 0 or ifid >= (1 << host_bits):
        raise PrefixError(f"interface ID {ifid:#x} does not fit in {prefix}")
    return IPv6Address(int(prefix.network_address) | ifid)


def parse_ifid(text: str) -> int:
    """Parse an interface ID written as '::1:2:3:4' or as hex '0x...'."""
    try:
        value = int(IPv6Address(text)) if text.startswith("::") else int(text, 16)
    except ValueError:
        raise PrefixError(f"not an interface ID: {text!r} (use '::a:b:c:d' or '0x...')") from None
    if value >= 1 << 64:
        raise PrefixError(f"interface ID {text!r} is wider than 64 bits")
    return value


# LIMA dismembered addressing: the /64 of a stub is {provider ASN (32 bits), stub number (32 bits)}.
def lima_prefix(provider_asn: int, stub_number: int) -> IPv6Network:
    """The /64 for a LIMA {provider ASN, stub number}: ASN in bits 0-31, stub in 32-63."""
    for name, value in (("provider ASN", provider_asn), ("stub number", stub_number)):
        if not 0 <= value < 1 << 32:
            raise PrefixError(f"{name} {value} does not fit in 32 bits")
    high = (provider_asn << 32) | stub_number
    return IPv6Network((high << 64, 64))


def lima_pair(prefix: IPv6Network) -> tuple[int, int]:
    """Inverse of `lima_prefix` for a /64."""
    if prefix.prefixlen != 64:
        raise PrefixError(f"a LIMA prefix is a /64, got {prefix}")
    high = int(prefix.network_address) >> 64
    return high >> 32, high & 0xFFFFFFFF


@dataclass(frozen=True)
class ProviderPrefix:
    """One PA prefix of the stub, delegated by `provider`, with its current status."""

    prefix: IPv6Network
    provider: str
    status: PrefixStatus = PrefixStatus.PREFERRED

    def __post_init__(self) -> None:
        if not self.provider:
            raise PrefixError("provider name must not be empty")
        if self.prefix.prefixlen > 64:
            raise PrefixError(f"prefix {self.prefix} is longer than /64")

    def with_status(self, status: PrefixStatus) -> ProviderPrefix:
        return ProviderPrefix(self.prefix, self.provider, status)

    def address(self, ifid: int) -> IPv6Address:
        return address_in(self.prefix, ifid)
