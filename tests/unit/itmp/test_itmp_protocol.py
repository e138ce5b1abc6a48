"""ITMP framing and message validation (PROTOCOL.md sections 3-4)."""

from __future__ import annotations

import pytest

from itmp.protocol import (
    HEADER,
    MAX_PAYLOAD,
    ErrorCode,
    FrameDecoder,
    MessageType,
    ProtocolError,
    encode,
    error_body,
)

REQUEST = {
    "request_id": 7,
    "prefix": "2001:db8:a:1::/64",
    "stub_endpoint": "2001:db8:b:1::1",
    "stub_as": 64512,
    "encapsulations": ["gre", "vxlan"],
    "bfd": True,
}


def test_round_trip_in_pieces() -> None:
    wire = encode(MessageType.TUNNEL_REQUEST, REQUEST) + encode(MessageType.KEEPALIVE)
    dec = FrameDecoder()
    got = []
    for i in range(len(wire)):
        got += dec.feed(wire[i : i + 1])
    assert [m.type for m in got] == [MessageType.TUNNEL_REQUEST, MessageType.KEEPALIVE]
    assert got[0].body == REQUEST


def test_header_layout() -> None:
    wire = encode(MessageType.KEEPALIVE)
    assert wire[:2] == b"IT" and wire[2] == 1 and wire[3] == 5
    assert int.from_bytes(wire[4:8], "big") == len(wire) - HEADER.size


@pytest.mark.parametrize(
    ("wire", "code"),
    [
        (b"XX\x01\x05\x00\x00\x00\x00", ErrorCode.MALFORMED),
        (b"IT\x02\x05\x00\x00\x00\x00", ErrorCode.UNSUPPORTED_VERSION),
        (b"IT\x01\x63\x00\x00\x00\x00", ErrorCode.MALFORMED),
        (b"IT\x01\x05" + (MAX_PAYLOAD + 1).to_bytes(4, "big"), ErrorCode.MALFORMED),
        (b"IT\x01\x05\x00\x00\x00\x03abc", ErrorCode.MALFORMED),
        (b"IT\x01\x05\x00\x00\x00\x02[]", ErrorCode.MALFORMED),
    ],
)
def test_bad_frames_are_protocol_errors(wire: bytes, code: ErrorCode) -> None:
    with pytest.raises(ProtocolError) as info:
        FrameDecoder().feed(wire)
    assert info.value.code is code


@pytest.mark.parametrize(
    ("field", "value", "words"),
    [
        ("prefix", "2001:db8:a:1::1/64", "ipv6-prefix"),
        ("prefix", "10.0.0.0/8", "ipv6-prefix"),
        ("stub_as", -1, "integer"),
        ("stub_as", True, "integer"),
        ("encapsulations", ["x"] * 100, "list"),
        ("request_id", None, "integer"),
    ],
)
def test_bad_fields_name_the_field(field: str, value: object, words: str) -> None:
    body = dict(REQUEST, **{field: value})
    with pytest.raises(ProtocolError, match=f"TUNNEL_REQUEST.{field}.*{words}"):
        encode(MessageType.TUNNEL_REQUEST, body)


def test_missing_field() -> None:
    body = {k: v for k, v in REQUEST.items() if k != "prefix"}
    with pytest.raises(ProtocolError, match="prefix: missing"):
        encode(MessageType.TUNNEL_REQUEST, body)


def test_unknown_fields_are_ignored_for_forward_compatibility() -> None:
    wire = encode(MessageType.TEARDOWN, {"tunnel_id": "A-1"})
    payload = b'{"tunnel_id":"A-1","future":1}'
    wire = wire[:4] + len(payload).to_bytes(4, "big") + payload
    (msg,) = FrameDecoder().feed(wire)
    assert msg.body["tunnel_id"] == "A-1"


def test_error_body() -> None:
    body = error_body(ErrorCode.PREFIX_NOT_DELEGATED, "nope", request_id=3, tunnel_id=None)
    assert body == {"code": 11, "reason": "nope", "request_id": 3}
    encode(MessageType.ERROR, body)
