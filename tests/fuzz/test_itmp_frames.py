"""Malformed ITMP frames: the decoder yields messages or ProtocolError, nothing else, ever."""

from __future__ import annotations

import contextlib
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lxml import etree

from itmp.protocol import HEADER, MAGIC, VERSION, FrameDecoder, MessageType, ProtocolError, encode
from itmp.router.model import ModelError, RouterConfig, apply_edit

pytestmark = pytest.mark.fuzz

FUZZ = settings(max_examples=1500, deadline=None, suppress_health_check=list(HealthCheck))


def decode_all(chunks: list[bytes]) -> None:
    dec = FrameDecoder()
    try:
        for c in chunks:
            for msg in dec.feed(c):
                assert isinstance(msg.body, dict)
    except ProtocolError:
        pass


@FUZZ
@given(st.lists(st.binary(max_size=64), max_size=8))
def test_random_bytes(chunks: list[bytes]) -> None:
    decode_all(chunks)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=40),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=6)
    ),
    max_leaves=8,
)
field_names = st.sampled_from(
    ["role", "id", "versions", "encapsulations", "auth", "keepalive", "request_id", "prefix", "stub_endpoint",
     "stub_as", "tunnel_id", "code", "reason", "vni", "mtu", "provider_address", "bfd", "hold_time"]
)  # fmt: skip


@settings(max_examples=250, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    st.integers(0, 8),
    st.dictionaries(field_names | st.text(max_size=8), json_values, max_size=10),
    st.integers(0, 3),
)
def test_well_framed_hostile_payloads(mtype: int, body: dict[str, object], cut: int) -> None:
    payload = json.dumps(body).encode()
    frame = HEADER.pack(MAGIC, VERSION, mtype, len(payload)) + payload
    decode_all([frame[: len(frame) // (cut + 1)], frame[len(frame) // (cut + 1) :]])


@FUZZ
@given(
    st.sampled_from(list(MessageType)),
    st.binary(max_size=200),
    st.integers(0, 12),
    st.integers(0, 255),
)
def test_mutated_valid_frames(mtype: MessageType, junk: bytes, pos: int, byte: int) -> None:
    body = (
        {"tunnel_id": "A-1"} if mtype in (MessageType.TUNNEL_CONFIRM, MessageType.TEARDOWN) else {}
    )
    try:
        frame = bytearray(encode(mtype, body))
    except ProtocolError:
        return
    if pos < len(frame):
        frame[pos] = byte
    decode_all([bytes(frame) + junk])


@settings(max_examples=600, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    st.text(max_size=60),
    st.sampled_from(["tunnel", "bgp-neighbor", "prefix-status", "x"]),
    st.sampled_from(["name", "vni", "prefix", "status", "address", "mtu", "bfd"]),
)
def test_router_model_rejects_cleanly(value: str, kind: str, leaf: str) -> None:
    """NETCONF edit-config content is untrusted too: only ModelError may come out."""
    root = etree.Element("{urn:ietf:params:xml:ns:netconf:base:1.0}config")
    router = etree.SubElement(root, "{urn:mast:router:1}router")
    entry = etree.SubElement(router, "{urn:mast:router:1}" + kind)
    etree.SubElement(entry, "{urn:mast:router:1}name").text = "t0"
    try:
        etree.SubElement(entry, "{urn:mast:router:1}" + leaf).text = value
    except ValueError:
        return  # lxml refuses control characters itself
    with contextlib.suppress(ModelError):
        apply_edit(RouterConfig(), root).validate()
