"""Encapsulation negotiation and the TMS authorization rule."""

from __future__ import annotations

import ipaddress

import pytest

from itmp.authorization import Customer, authorize
from itmp.negotiation import negotiate, parse_encapsulations
from itmp.protocol import ErrorCode, ProtocolError
from itmp.router.model import Encapsulation

GRE, VXLAN = Encapsulation.GRE, Encapsulation.VXLAN
N = ipaddress.IPv6Network
A = ipaddress.IPv6Address


def test_gre_preferred_when_both_have_it() -> None:
    encap, why = negotiate([GRE, VXLAN], [VXLAN, GRE])
    assert encap is GRE and "best common" in why


def test_fallback_to_vxlan_says_why() -> None:
    encap, why = negotiate([VXLAN], [GRE, VXLAN])
    assert encap is VXLAN
    assert "gre not supported by stub router" in why


def test_no_common() -> None:
    with pytest.raises(ProtocolError) as info:
        negotiate([GRE], [VXLAN])
    assert info.value.code is ErrorCode.NO_COMMON_ENCAPSULATION


def test_unknown_names_ignored() -> None:
    assert parse_encapsulations(["mpls", "vxlan"]) == [VXLAN]


CUSTOMERS = {
    "stub1": Customer("stub1", 64512, [N("2001:db8:a:100::/56")], [N("2001:db8:b:1::/64")]),
}


def test_authorized() -> None:
    c = authorize(CUSTOMERS, "stub1", N("2001:db8:a:100::/64"), A("2001:db8:b:1::1"), 64512)
    assert c.name == "stub1"


@pytest.mark.parametrize(
    ("peer", "prefix", "endpoint", "asn", "code"),
    [
        ("stub9", "2001:db8:a:100::/64", "2001:db8:b:1::1", 64512, ErrorCode.UNKNOWN_CUSTOMER),
        ("stub1", "2001:db8:a:100::/64", "2001:db8:b:1::1", 64999, ErrorCode.UNKNOWN_CUSTOMER),
        ("stub1", "2001:db8:a:200::/64", "2001:db8:b:1::1", 64512, ErrorCode.PREFIX_NOT_DELEGATED),
        ("stub1", "2001:db8:a::/48", "2001:db8:b:1::1", 64512, ErrorCode.PREFIX_NOT_DELEGATED),
        ("stub1", "2001:db8:a:100::/64", "2001:db8:c::1", 64512, ErrorCode.ENDPOINT_NOT_AUTHORIZED),
    ],
)
def test_refusals(peer: str, prefix: str, endpoint: str, asn: int, code: ErrorCode) -> None:
    with pytest.raises(ProtocolError) as info:
        authorize(CUSTOMERS, peer, N(prefix), A(endpoint), asn)
    assert info.value.code is code


def test_endpoint_in_own_space_refused() -> None:
    with pytest.raises(ProtocolError) as info:
        authorize(
            CUSTOMERS,
            "stub1",
            N("2001:db8:a:100::/64"),
            A("2001:db8:b:1::1"),
            64512,
            [N("2001:db8:b::/48")],
        )
    assert info.value.code is ErrorCode.ENDPOINT_NOT_AUTHORIZED
