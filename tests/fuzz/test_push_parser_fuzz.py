"""Fuzz the push parser and verifier: arbitrary bytes and mutated valid pushes only ever
raise PushError (never anything else), and never verify without the key."""

from __future__ import annotations

import ipaddress

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mast_client import wire
from mast_client.listener import PushListener
from mast_client.verifier import PushVerifier
from mast_common.prefix import PrefixStatus

pytestmark = [pytest.mark.fuzz]

KEY = b"k" * 32
BASE = wire.encode_push(
    [
        wire.PrefixEntry(ipaddress.IPv6Network("2001:db8:a::/64"), PrefixStatus.DISCOURAGED, 0, 0),
        wire.PrefixEntry(ipaddress.IPv6Network("2001:db8:b::/64"), PrefixStatus.PREFERRED, 0, 0),
    ],
    key=KEY,
    counter=1000,
)
FUZZ = settings(max_examples=1500, deadline=None, suppress_health_check=list(HealthCheck))


def _check(data: bytes) -> None:
    v = PushVerifier(key=KEY, last_counter=999)
    try:
        push = v.accept(data)
    except wire.PushError:
        return
    # Anything accepted must carry a MAC that really verifies.
    assert push.mac == wire.compute_mac(data, push.auth_offset, KEY)


@FUZZ
@given(st.binary(max_size=400))
def test_random_bytes(data: bytes) -> None:
    _check(bytes([wire.DEFAULT_MSG_TYPE]) + data)
    _check(data)


@FUZZ
@given(
    st.lists(st.tuples(st.integers(0, len(BASE) - 1), st.integers(0, 255)), max_size=8),
    st.integers(0, len(BASE)),
)
def test_mutated_pushes(flips: list[tuple[int, int]], cut: int) -> None:
    data = bytearray(BASE)
    for pos, value in flips:
        data[pos] = value
    mutated = bytes(data[:cut])
    if mutated == BASE:
        return
    v = PushVerifier(key=KEY, last_counter=999)
    try:
        v.accept(mutated)
    except wire.PushError:
        return
    # Only a change the MAC does not cover could pass: there is none.
    raise AssertionError(f"mutated push accepted: {mutated.hex()}")


@FUZZ
@given(st.binary(max_size=300))
def test_listener_never_raises(data: bytes) -> None:
    class Nothing:
        def apply(self, entry: wire.PrefixEntry) -> None:
            pass

    listener = PushListener("eth0", Nothing())
    listener.handle_dhcp(data)
    listener.handle_dhcp(b"\x07" + data)
