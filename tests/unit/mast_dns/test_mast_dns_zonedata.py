"""Zone data encoding of mod-mast: the APL status record, the host map, LIMA prefixes."""

from __future__ import annotations

import ipaddress

import dns.name
import dns.rdata
import pytest
from hypothesis import given
from hypothesis import strategies as st
from mast_common.prefix import PrefixStatus
from mast_dns.knotconf import zone_text
from mast_dns.zonedata import (
    StatusEntry,
    ZoneDataError,
    decode_host,
    decode_status,
    encode_status,
    host_record_text,
    prefix_from_text,
    relative_name,
)


def test_status_record_keeps_order_and_marks_discouraged_with_negation() -> None:
    entries = [
        StatusEntry(prefix_from_text("2001:db8:b::/64"), PrefixStatus.DISCOURAGED),
        StatusEntry(prefix_from_text("2001:db8:a::/48"), PrefixStatus.PREFERRED),
    ]
    record = encode_status(entries)
    assert record.to_text() == "!2:2001:db8:b::/64 2:2001:db8:a::/48"
    assert decode_status([record]) == entries


def test_status_record_rejects_withdrawn_duplicates_and_empty() -> None:
    a = prefix_from_text("2001:db8:a::/64")
    with pytest.raises(ZoneDataError, match="withdrawn"):
        encode_status([StatusEntry(a, PrefixStatus.WITHDRAWN)])
    with pytest.raises(ZoneDataError, match="twice"):
        encode_status([StatusEntry(a, PrefixStatus.PREFERRED)] * 2)
    with pytest.raises(ZoneDataError, match="empty"):
        encode_status([])


def test_decode_status_is_strict_unless_asked_to_drop() -> None:
    record = dns.rdata.from_text("IN", "APL", "2:2001:db8:a::/64 1:192.0.2.0/24 2:2001:db8:b::/96")
    with pytest.raises(ZoneDataError, match="longer than /64"):
        decode_status([record])
    dropped: list[str] = []
    assert decode_status([record], dropped=dropped) == [
        StatusEntry(prefix_from_text("2001:db8:a::/64"), PrefixStatus.PREFERRED)
    ]
    assert len(dropped) == 1 and "2001:db8:b::/96" in dropped[0]


def test_lima_pair_is_the_documented_64() -> None:
    assert prefix_from_text("AS64500:17") == ipaddress.IPv6Network("0:fbf4:0:11::/64")
    assert prefix_from_text("as4200000000:4294967295") == ipaddress.IPv6Network(
        "fa56:ea00:ffff:ffff::/64"
    )
    with pytest.raises(ValueError, match="32 bits"):
        prefix_from_text("AS4294967296:1")
    with pytest.raises(ValueError, match="longer than /64"):
        prefix_from_text("2001:db8::/80")


def test_host_record_round_trip_and_other_txt_ignored() -> None:
    text = host_record_text("www.lab", 0x1_0000_0000_0020)
    assert text == '"mast-host" "www.lab" "::1:0:0:20"'
    assert decode_host(dns.rdata.from_text("IN", "TXT", text)) == ("www.lab", 0x1_0000_0000_0020)
    assert decode_host(dns.rdata.from_text("IN", "TXT", '"v=spf1 -all"')) is None
    assert decode_host(dns.rdata.from_text("IN", "TXT", '"mast-host" "h1" "0xff"')) == ("h1", 255)


@pytest.mark.parametrize(
    "text",
    [
        '"mast-host" "h1"',
        '"mast-host" "h 1" "::1"',
        '"mast-host" "h1." "::1"',
        '"mast-host" "h1" "1::"',
        '"mast-host" "h1" "nope"',
        '"mast-host" "h1" "::1" "x"',
    ],
)
def test_bad_host_records_are_named(text: str) -> None:
    with pytest.raises(ZoneDataError, match=r"mast-host|host name"):
        decode_host(dns.rdata.from_text("IN", "TXT", text))


def test_relative_names() -> None:
    zone = dns.name.from_text("lab.mast.")
    assert relative_name("h1", zone) == "h1"
    assert relative_name("H1.lab.mast.", zone) == "H1"
    assert relative_name("@", zone) == "@"
    with pytest.raises(ZoneDataError, match="not inside"):
        relative_name("h1.elsewhere.", zone)


def test_zone_text_has_status_map_and_optional_literals() -> None:
    text = zone_text(
        "lab.mast.",
        hosts={"h1": 0x10},
        prefixes=[("2001:db8:a::/64", "preferred"), ("2001:db8:b::/64", "discouraged")],
        literal=True,
    )
    assert "@ APL 2:2001:db8:a::/64 !2:2001:db8:b::/64" in text
    assert '@ TXT "mast-host" "h1" "::10"' in text
    assert "h1 AAAA 2001:db8:a::10" in text and "2001:db8:b::10" not in text


@given(
    st.lists(
        st.tuples(st.integers(0, (1 << 64) - 1), st.integers(0, 64), st.booleans()),
        max_size=32,
        unique_by=lambda t: (t[0] >> (64 - t[1]) if t[1] else 0, t[1]),
    )
)
def test_status_round_trips_through_wire(items: list[tuple[int, int, bool]]) -> None:
    entries = [
        StatusEntry(
            ipaddress.IPv6Network(
                ((high >> (64 - length) << (64 - length) if length else 0) << 64, length)
            ),
            PrefixStatus.DISCOURAGED if neg else PrefixStatus.PREFERRED,
        )
        for high, length, neg in items
    ]
    if not entries:
        return
    wire = encode_status(entries).to_digestable()
    back = dns.rdata.from_wire("IN", "APL", wire, 0, len(wire))
    assert decode_status([back]) == entries


@given(st.text(max_size=40), st.integers(-5, 1 << 65))
def test_host_record_text_never_writes_what_decode_rejects(name: str, ifid: int) -> None:
    try:
        text = host_record_text(name, ifid)
    except ZoneDataError:
        return
    assert decode_host(dns.rdata.from_text("IN", "TXT", text)) == (name, ifid)
