"""ITMP messages and their framing (itmp/PROTOCOL.md): encode, decode, validate.

Everything a peer sends is untrusted: `FrameDecoder` and `decode_message` turn any byte string
into either a `Message` or a `ProtocolError` carrying the ERROR code to answer with — never
another exception (the fuzz tests hold them to that).
"""

from __future__ import annotations

import enum
import ipaddress
import json
import re
import struct
from dataclasses import dataclass
from typing import Any

MAGIC = b"IT"
VERSION = 1
HEADER = struct.Struct("!2sBBI")  # magic, version, type, payload length
MAX_PAYLOAD = 65536


class MessageType(enum.IntEnum):
    HELLO = 1
    TUNNEL_REQUEST = 2
    TUNNEL_OFFER = 3
    TUNNEL_CONFIRM = 4
    KEEPALIVE = 5
    TEARDOWN = 6
    ERROR = 7


class ErrorCode(enum.IntEnum):
    MALFORMED = 1
    UNSUPPORTED_VERSION = 2
    UNEXPECTED_MESSAGE = 3
    HOLD_TIMER_EXPIRED = 4
    UNKNOWN_CUSTOMER = 10
    PREFIX_NOT_DELEGATED = 11
    ENDPOINT_NOT_AUTHORIZED = 12
    NO_COMMON_ENCAPSULATION = 13
    PROVISIONING_FAILED = 20
    RESOURCES_EXHAUSTED = 21
    UNKNOWN_TUNNEL = 30
    INTERNAL = 99


class ProtocolError(Exception):
    """A peer sent something ITMP does not allow; `code` is the ERROR code to answer with."""

    def __init__(self, code: ErrorCode, reason: str) -> None:
        self.code = code
        self.reason = reason
        super().__init__(f"{code.name}: {reason}")


@dataclass(frozen=True)
class Message:
    type: MessageType
    body: dict[str, Any]

    def get(self, key: str) -> Any:
        return self.body[key]


# Field rules per message type: name → (kind, required). Kinds are checked by `_check`.
_STR = "str"
_INT = "int"
_BOOL = "bool"
_ADDR = "ipv6-address"
_IFACE = "ipv6-interface"
_NET = "ipv6-prefix"
_STRLIST = "str-list"
_INTLIST = "int-list"

SCHEMA: dict[MessageType, dict[str, tuple[str, bool]]] = {
    MessageType.HELLO: {
        "role": (_STR, True),
        "id": (_STR, True),
        "versions": (_INTLIST, True),
        "encapsulations": (_STRLIST, True),
        "auth": (_STRLIST, True),
        "keepalive": (_INT, True),
    },
    MessageType.TUNNEL_REQUEST: {
        "request_id": (_INT, True),
        "prefix": (_NET, True),
        "stub_endpoint": (_ADDR, True),
        "stub_as": (_INT, True),
        "encapsulations": (_STRLIST, True),
        "bfd": (_BOOL, False),
    },
    MessageType.TUNNEL_OFFER: {
        "request_id": (_INT, True),
        "tunnel_id": (_STR, True),
        "encapsulation": (_STR, True),
        "encapsulation_reason": (_STR, True),
        "provider_endpoint": (_ADDR, True),
        "vni": (_INT, False),
        "provider_address": (_IFACE, True),
        "stub_address": (_IFACE, True),
        "provider_as": (_INT, True),
        "mtu": (_INT, True),
        "bfd": (_BOOL, True),
        "hold_time": (_INT, True),
        "local_pref": (_INT, True),
    },
    MessageType.TUNNEL_CONFIRM: {"tunnel_id": (_STR, True)},
    MessageType.KEEPALIVE: {},
    MessageType.TEARDOWN: {"tunnel_id": (_STR, True), "reason": (_STR, False)},
    MessageType.ERROR: {
        "code": (_INT, True),
        "reason": (_STR, True),
        "request_id": (_INT, False),
        "tunnel_id": (_STR, False),
        "fatal": (_BOOL, False),
    },
}

_ID_RE = re.compile(r"^[A-Za-z0-9_.:-]{1,64}$")
MAX_STRING = 1024
MAX_LIST = 16


def _check(mtype: MessageType, key: str, kind: str, value: Any) -> None:
    def bad(why: str) -> ProtocolError:
        return ProtocolError(ErrorCode.MALFORMED, f"{mtype.name}.{key}: {why}")

    if kind == _STR:
        if not isinstance(value, str) or len(value) > MAX_STRING:
            raise bad(f"expected a string of at most {MAX_STRING} characters")
    elif kind == _INT:
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 1 << 32:
            raise bad("expected an integer 0..2^32-1")
    elif kind == _BOOL:
        if not isinstance(value, bool):
            raise bad("expected true or false")
    elif kind in (_STRLIST, _INTLIST):
        if not isinstance(value, list) or len(value) > MAX_LIST:
            raise bad(f"expected a list of at most {MAX_LIST} items")
        for item in value:
            _check(mtype, key + "[]", _STR if kind == _STRLIST else _INT, item)
    else:
        if not isinstance(value, str) or len(value) > 64:
            raise bad(f"expected an {kind} string")
        try:
            if kind == _ADDR:
                ipaddress.IPv6Address(value)
            elif kind == _IFACE:
                ipaddress.IPv6Interface(value)
            else:
                ipaddress.IPv6Network(value, strict=True)
        except ValueError:
            raise bad(f"expected an {kind}, got {value!r}") from None


def validate(mtype: MessageType, body: Any) -> dict[str, Any]:
    if not isinstance(body, dict):
        raise ProtocolError(ErrorCode.MALFORMED, f"{mtype.name}: payload is not a JSON object")
    schema = SCHEMA[mtype]
    for key, (kind, required) in schema.items():
        if key not in body:
            if required:
                raise ProtocolError(ErrorCode.MALFORMED, f"{mtype.name}.{key}: missing")
            continue
        _check(mtype, key, kind, body[key])
    # Unknown fields are ignored (forward compatibility) but must not be huge: the frame
    # length already bounds them.
    if "tunnel_id" in schema and "tunnel_id" in body and not _ID_RE.match(body["tunnel_id"]):
        raise ProtocolError(ErrorCode.MALFORMED, f"{mtype.name}.tunnel_id: bad identifier")
    return body


def encode(mtype: MessageType, body: dict[str, Any] | None = None) -> bytes:
    payload = json.dumps(validate(mtype, dict(body or {})), separators=(",", ":")).encode()
    if len(payload) > MAX_PAYLOAD:
        raise ValueError(f"{mtype.name}: payload of {len(payload)} bytes exceeds {MAX_PAYLOAD}")
    return HEADER.pack(MAGIC, VERSION, mtype, len(payload)) + payload


def decode_message(mtype_raw: int, payload: bytes) -> Message:
    try:
        mtype = MessageType(mtype_raw)
    except ValueError:
        raise ProtocolError(ErrorCode.MALFORMED, f"unknown message type {mtype_raw}") from None
    try:
        body = json.loads(payload.decode("utf-8")) if payload else {}
    except (ValueError, RecursionError) as exc:  # UnicodeDecodeError, JSONDecodeError, int too long
        raise ProtocolError(
            ErrorCode.MALFORMED, f"{mtype.name}: payload is not JSON ({exc})"
        ) from None
    return Message(mtype, validate(mtype, body))


class FrameDecoder:
    """Incremental decoder: feed bytes as they arrive, take complete messages out."""

    def __init__(self) -> None:
        self._buf = bytearray()

    def feed(self, data: bytes) -> list[Message]:
        self._buf += data
        out: list[Message] = []
        while len(self._buf) >= HEADER.size:
            magic, version, mtype, length = HEADER.unpack_from(self._buf)
            if magic != MAGIC:
                raise ProtocolError(ErrorCode.MALFORMED, f"bad magic {bytes(magic)!r}")
            if version != VERSION:
                raise ProtocolError(
                    ErrorCode.UNSUPPORTED_VERSION,
                    f"frame version {version} (this side speaks {VERSION})",
                )
            if length > MAX_PAYLOAD:
                raise ProtocolError(
                    ErrorCode.MALFORMED, f"payload length {length} exceeds {MAX_PAYLOAD}"
                )
            if len(self._buf) < HEADER.size + length:
                break
            payload = bytes(self._buf[HEADER.size : HEADER.size + length])
            del self._buf[: HEADER.size + length]
            out.append(decode_message(mtype, payload))
        return out


def error_body(code: ErrorCode, reason: str, **extra: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"code": int(code), "reason": reason[:MAX_STRING]}
    body.update({k: v for k, v in extra.items() if v is not None})
    return body
