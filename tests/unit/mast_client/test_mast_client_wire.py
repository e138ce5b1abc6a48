from __future__ import annotations

import ipaddress
import struct

import pytest
from mast_client import scapy_push, wire
from mast_client.listener import PushListener, udp_payload_to_port
from mast_client.verifier import PushVerifier
from mast_common.prefix import PrefixStatus

KEY = bytes(range(32))
A = ipaddress.IPv6Network("2001:db8:a::/64")
B = ipaddress.IPv6Network("2001:db8:b::/64")


def entry(net: ipaddress.IPv6Network, status: PrefixStatus) -> wire.PrefixEntry:
    return wire.PrefixEntry(net, status, 0, 0)


def test_encode_parse_round_trip() -> None:
    entries = [entry(A, PrefixStatus.DISCOURAGED), wire.PrefixEntry(B, PrefixStatus.PREFERRED, 5, 9)]
    data = wire.encode_push(entries, key=KEY, counter=0x1234567890)
    push = wire.parse_push(data)
    assert push.entries == tuple(entries)
    assert push.counter == 0x1234567890
    assert push.transaction_id == 0x567890
    assert push.mac == wire.compute_mac(data, push.auth_offset, KEY)


def test_scapy_layer_builds_the_same_bytes() -> None:
    built = scapy_push.sign(scapy_push.build([(str(A), "discouraged")], counter=77), KEY)
    assert built == wire.encode_push([entry(A, PrefixStatus.DISCOURAGED)], key=KEY, counter=77)
    dissected = scapy_push.MastPush(built)
    assert dissected.options[1].prefix == "2001:db8:a::"
    assert dissected.options[2].replay == 77


def test_verifier_rules() -> None:
    v = PushVerifier()
    data = wire.encode_push([entry(A, PrefixStatus.DISCOURAGED)], key=KEY, counter=10)
    with pytest.raises(wire.UnauthenticatedPush):
        v.accept(data)  # no key yet
    v.learn(wire.KeyInfo(KEY, 5, wire.DEFAULT_MSG_TYPE))
    assert v.accept(data).counter == 10
    with pytest.raises(wire.ReplayedPush):
        v.accept(data)
    forged = wire.encode_push([entry(A, PrefixStatus.PREFERRED)], key=b"y" * 32, counter=11)
    with pytest.raises(wire.ForgedPush):
        v.accept(forged)
    tampered = bytearray(wire.encode_push([entry(A, PrefixStatus.PREFERRED)], key=KEY, counter=12))
    tampered[30] ^= 1  # the status byte of the prefix option: a valid status, a wrong MAC
    with pytest.raises(wire.ForgedPush):
        v.accept(bytes(tampered))
    with pytest.raises(wire.TruncatedPush):
        v.accept(data[:-3])
    assert v.rejected == {"unauthenticated": 1, "replayed": 1, "forged": 2, "truncated": 1}


def test_counter_floor_from_key_option() -> None:
    v = PushVerifier()
    v.learn(wire.KeyInfo(KEY, 100, wire.DEFAULT_MSG_TYPE))
    old = wire.encode_push([entry(A, PrefixStatus.DISCOURAGED)], key=KEY, counter=100)
    with pytest.raises(wire.ReplayedPush):
        v.accept(old)


def reply_with_key(enterprise: int = wire.DEFAULT_ENTERPRISE_ID) -> bytes:
    subs = struct.pack("!HH", 1, 32) + KEY + struct.pack("!HHQ", 2, 8, 42)
    subs += struct.pack("!HHB", 3, 1, 250)
    body = struct.pack("!I", enterprise) + subs
    return b"\x07\x00\x00\x01" + struct.pack("!HH", 17, len(body)) + body


def test_find_key_info() -> None:
    info = wire.find_key_info(reply_with_key())
    assert info == wire.KeyInfo(KEY, 42, 250)
    assert wire.find_key_info(reply_with_key(9)) is None
    assert wire.find_key_info(reply_with_key()[:-2]) is None
    assert wire.find_key_info(b"\x02" + reply_with_key()[1:]) is None


class RecordingApplier:
    def __init__(self) -> None:
        self.entries: list[wire.PrefixEntry] = []

    def apply(self, e: wire.PrefixEntry) -> None:
        self.entries.append(e)


def test_listener_learns_key_then_applies() -> None:
    applier = RecordingApplier()
    listener = PushListener("eth0", applier)
    push = wire.encode_push([entry(A, PrefixStatus.DISCOURAGED)], key=KEY, counter=43)
    assert listener.handle_dhcp(push) == "unauthenticated"
    assert listener.handle_dhcp(reply_with_key()) == "key"
    assert listener.handle_dhcp(push) == "accepted"
    assert listener.handle_dhcp(push) == "replayed"
    assert applier.entries == [entry(A, PrefixStatus.DISCOURAGED)]
    assert listener.stats()["rejected"] == {"unauthenticated": 1, "replayed": 1}


def test_udp_payload_extraction() -> None:
    payload = b"\xfa\x00\x00\x01"
    udp = struct.pack("!HHHH", 547, 546, 8 + len(payload), 0) + payload
    ip6 = bytes([0x60, 0, 0, 0]) + struct.pack("!HBB", len(udp), 17, 1) + bytes(32)
    assert udp_payload_to_port(ip6 + udp, 546) == payload
    assert udp_payload_to_port(ip6 + udp, 547) is None
    assert udp_payload_to_port((ip6 + udp)[:40], 546) is None
