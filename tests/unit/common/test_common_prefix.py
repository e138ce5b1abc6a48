from __future__ import annotations

import ipaddress

import pytest
from hypothesis import given
from hypothesis import strategies as st
from mast_common.prefix import (
    PrefixError,
    PrefixStatus,
    ProviderPrefix,
    address_in,
    interface_id,
    lima_pair,
    lima_prefix,
    parse_ifid,
    parse_prefix,
)


def test_parse_prefix_rules() -> None:
    assert parse_prefix("2001:db8:a::/48").prefixlen == 48
    with pytest.raises(PrefixError, match="IPv4"):
        parse_prefix("192.0.2.0/24")
    with pytest.raises(PrefixError, match="host bits set"):
        parse_prefix("2001:db8:a::1/48")
    with pytest.raises(PrefixError, match="longer than /64"):
        parse_prefix("2001:db8:a::/80")


def test_sibling_addresses_share_the_interface_id() -> None:
    a = ProviderPrefix(parse_prefix("2001:db8:a:1::/64"), "A")
    b = ProviderPrefix(parse_prefix("2001:db8:b:1::/64"), "B")
    ifid = interface_id("2001:db8:a:1:211:22ff:fe33:4455")
    assert str(a.address(ifid)) == "2001:db8:a:1:211:22ff:fe33:4455"
    assert str(b.address(ifid)) == "2001:db8:b:1:211:22ff:fe33:4455"
    assert b.with_status(PrefixStatus.DISCOURAGED).status == "discouraged"


def test_ifid_parsing_and_bounds() -> None:
    assert parse_ifid("::1:2:3:4") == 0x0001000200030004
    assert parse_ifid("0x10") == 16
    with pytest.raises(PrefixError):
        parse_ifid("zz")
    with pytest.raises(PrefixError, match="wider than 64"):
        parse_ifid("0x1" + "0" * 16)
    with pytest.raises(PrefixError, match="does not fit"):
        address_in(ipaddress.IPv6Network("2001:db8::/120"), 0x1FF)


def test_lima_rule_is_documented_layout() -> None:
    net = lima_prefix(64500, 7)
    assert net == ipaddress.IPv6Network("0:fbf4:0:7::/64")
    assert lima_pair(net) == (64500, 7)
    with pytest.raises(PrefixError, match="32 bits"):
        lima_prefix(1 << 32, 0)


@given(st.integers(0, 2**32 - 1), st.integers(0, 2**32 - 1))
def test_lima_round_trip(asn: int, stub: int) -> None:
    assert lima_pair(lima_prefix(asn, stub)) == (asn, stub)
