"""Scapy layers for the Broadcast Prefix Push (PUSH.md): build, forge and dissect pushes.

Tests use these to send forged, replayed and truncated pushes; `sign` fills in the MAC the
way the Kea hook does, so a layer built here with the right key is a valid push.
"""

from __future__ import annotations

import hashlib
import hmac
from typing import Any

from mast_client import wire
from scapy.fields import (
    ByteEnumField,
    ByteField,
    FieldLenField,
    IntField,
    IP6Field,
    PacketListField,
    ShortEnumField,
    StrFixedLenField,
    StrLenField,
    X3BytesField,
    XLongField,
)
from scapy.packet import Packet

_OPT_NAMES = {
    wire.OPT_SERVERID: "SERVERID",
    wire.OPT_AUTH: "AUTH",
    wire.OPT_MAST_PREFIX_STATUS: "MAST_PREFIX_STATUS",
}
_STATUS_NAMES = {0: "preferred", 1: "discouraged", 2: "withdrawn"}


class _Option(Packet):
    def extract_padding(self, s: bytes) -> tuple[bytes, bytes]:
        return b"", s


class PushOptGeneric(_Option):
    name = "Push option"
    fields_desc = [  # noqa: RUF012 (Scapy's layer description)
        ShortEnumField("optcode", 0, _OPT_NAMES),
        FieldLenField("optlen", None, length_of="data", fmt="!H"),
        StrLenField("data", b"", length_from=lambda p: p.optlen),
    ]


class PushOptServerId(_Option):
    name = "Push server identifier"
    fields_desc = [  # noqa: RUF012
        ShortEnumField("optcode", wire.OPT_SERVERID, _OPT_NAMES),
        FieldLenField("optlen", None, length_of="duid", fmt="!H"),
        StrLenField("duid", b"\x00\x04mast-test-server", length_from=lambda p: p.optlen),
    ]


class PushOptPrefixStatus(_Option):
    name = "MAST prefix status"
    fields_desc = [  # noqa: RUF012
        ShortEnumField("optcode", wire.OPT_MAST_PREFIX_STATUS, _OPT_NAMES),
        ShortEnumField("optlen", wire.PREFIX_OPTION_LEN, {}),
        ByteEnumField("status", 1, _STATUS_NAMES),
        ByteField("plen", 64),
        IntField("preferred", 0),
        IntField("valid", 0),
        IP6Field("prefix", "2001:db8::"),
    ]


class PushOptAuth(_Option):
    name = "Push authentication"
    fields_desc = [  # noqa: RUF012
        ShortEnumField("optcode", wire.OPT_AUTH, _OPT_NAMES),
        ShortEnumField("optlen", wire.AUTH_LEN, {}),
        ByteField("proto", wire.AUTH_PROTO_RECONFKEY),
        ByteField("alg", wire.AUTH_ALG_HMAC_SHA256),
        ByteField("rdm", wire.AUTH_RDM_COUNTER),
        XLongField("replay", 0),
        ByteField("authtype", wire.AUTH_TYPE_MAC),
        StrFixedLenField("mac", b"\x00" * wire.MAC_LEN, wire.MAC_LEN),
    ]


def _option_class(data: bytes, *args: Any, **kwargs: Any) -> Packet:
    code = int.from_bytes(data[:2], "big") if len(data) >= 2 else 0
    cls: type[Packet] = {
        wire.OPT_SERVERID: PushOptServerId,
        wire.OPT_MAST_PREFIX_STATUS: PushOptPrefixStatus,
        wire.OPT_AUTH: PushOptAuth,
    }.get(code, PushOptGeneric)
    if cls is not PushOptGeneric and len(data) >= 4:
        length = int.from_bytes(data[2:4], "big")
        expected = {PushOptPrefixStatus: wire.PREFIX_OPTION_LEN, PushOptAuth: wire.AUTH_LEN}
        if cls in expected and length != expected[cls]:
            cls = PushOptGeneric
    return cls(data)


class MastPush(Packet):
    name = "MAST Broadcast Prefix Push"
    fields_desc = [  # noqa: RUF012
        ByteField("msgtype", wire.DEFAULT_MSG_TYPE),
        X3BytesField("trid", 0),
        PacketListField("options", [], _option_class),
    ]


def build(
    entries: list[tuple[str, str]],
    *,
    counter: int,
    msg_type: int = wire.DEFAULT_MSG_TYPE,
    valid: int = 0,
) -> MastPush:
    """An unsigned push for [(prefix, status), ...]; sign it with `sign`."""
    opts: list[Packet] = [PushOptServerId()]
    codes = {v: k for k, v in _STATUS_NAMES.items()}
    for prefix, status in entries:
        addr, plen = prefix.split("/")
        opts.append(
            PushOptPrefixStatus(status=codes[status], plen=int(plen), prefix=addr, valid=valid)
        )
    opts.append(PushOptAuth(replay=counter))
    return MastPush(msgtype=msg_type, trid=counter & 0xFFFFFF, options=opts)


def sign(push: MastPush, key: bytes) -> bytes:
    """The push's bytes with the HMAC-SHA256 MAC computed over the message (MAC zeroed)."""
    data = bytearray(bytes(push))
    mac_at = len(data) - wire.MAC_LEN
    data[mac_at:] = bytes(wire.MAC_LEN)
    data[mac_at:] = hmac.new(key, bytes(data), hashlib.sha256).digest()
    return bytes(data)
