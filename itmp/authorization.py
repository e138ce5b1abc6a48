"""The TMS authorization rule (PROTOCOL.md section 6).

A provider provisions a tunnel only for a known customer (the TLS client certificate's
common name), only for a prefix this provider delegated to that customer, and only toward a stub
endpoint inside a prefix the customer holds from another provider (the backup path must run
through the other provider, and the provider must not be turned into a tunnel to anywhere).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from itmp.protocol import ErrorCode, ProtocolError


@dataclass(frozen=True)
class Customer:
    name: str  # the common name of the customer's TLS client certificate
    asn: int
    prefixes: list[ipaddress.IPv6Network]  # delegated by this provider
    other_prefixes: list[ipaddress.IPv6Network]  # delegated to it by its other providers
    med: int | None = None
    local_pref: int | None = None
    notes: str = field(default="", compare=False)


def authorize(
    customers: Mapping[str, Customer],
    peer: str,
    prefix: ipaddress.IPv6Network,
    stub_endpoint: ipaddress.IPv6Address,
    stub_as: int,
    own_prefixes: Sequence[ipaddress.IPv6Network] = (),
) -> Customer:
    customer = customers.get(peer)
    if customer is None:
        raise ProtocolError(
            ErrorCode.UNKNOWN_CUSTOMER, f"no customer with certificate name {peer!r}"
        )
    if stub_as != customer.asn:
        raise ProtocolError(
            ErrorCode.UNKNOWN_CUSTOMER,
            f"customer {peer} has AS {customer.asn}, request says {stub_as}",
        )
    if not any(prefix.subnet_of(d) for d in customer.prefixes):
        raise ProtocolError(
            ErrorCode.PREFIX_NOT_DELEGATED,
            f"{prefix} is not inside a prefix this provider delegated to {peer}",
        )
    if not any(stub_endpoint in o for o in customer.other_prefixes):
        raise ProtocolError(
            ErrorCode.ENDPOINT_NOT_AUTHORIZED,
            f"endpoint {stub_endpoint} is not inside {peer}'s delegation from another provider",
        )
    if any(stub_endpoint in own for own in (*own_prefixes, *customer.prefixes)):
        raise ProtocolError(
            ErrorCode.ENDPOINT_NOT_AUTHORIZED,
            f"endpoint {stub_endpoint} is in this provider's own space: the tunnel would not back anything up",
        )
    return customer
