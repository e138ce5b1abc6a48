"""Broadcast Prefix Push wire format (dhcp-hooks/PUSH.md): a strict parser and an encoder.

The parser takes untrusted bytes off the link: it never raises anything but `PushError`
subclasses, checks every length against the buffer, and accepts only the layout PUSH.md
allows (SERVERID, prefix-status options, one AUTH option last).
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import struct
from dataclasses import dataclass

from mast_common.prefix import PrefixStatus

OPT_CLIENTID = 1
OPT_SERVERID = 2
OPT_AUTH = 11
OPT_VENDOR_OPTS = 17
OPT_MAST_PREFIX_STATUS = 65001

AUTH_PROTO_RECONFKEY = 3
AUTH_ALG_HMAC_SHA256 = 2
AUTH_RDM_COUNTER = 0
AUTH_TYPE_MAC = 2
MAC_LEN = 32
AUTH_LEN = 3 + 8 + 1 + MAC_LEN

VSO_PUSH_KEY = 1
VSO_PUSH_COUNTER = 2
VSO_PUSH_MSG_TYPE = 3

DEFAULT_MSG_TYPE = 250
DEFAULT_ENTERPRISE_ID = 32473
MSG_REPLY = 7
PREFIX_OPTION_LEN = 26

_STATUS_CODES = {0: PrefixStatus.PREFERRED, 1: PrefixStatus.DISCOURAGED, 2: PrefixStatus.WITHDRAWN}
_STATUS_VALUES = {v: k for k, v in _STATUS_CODES.items()}


class PushError(ValueError):
    """A push that must be dropped; `reason` is the counter label (malformed, forged, ...)."""

    reason = "malformed"


class MalformedPush(PushError):
    reason = "malformed"


class TruncatedPush(MalformedPush):
    reason = "truncated"


class UnauthenticatedPush(PushError):
    reason = "unauthenticated"


class ForgedPush(PushError):
    reason = "forged"


class ReplayedPush(PushError):
    reason = "replayed"


@dataclass(frozen=True)
class PrefixEntry:
    prefix: ipaddress.IPv6Network
    status: PrefixStatus
    preferred_lifetime: int
    valid_lifetime: int


@dataclass(frozen=True)
class Push:
    msg_type: int
    transaction_id: int
    server_duid: bytes
    entries: tuple[PrefixEntry, ...]
    counter: int
    mac: bytes
    auth_offset: int  # where the AUTH option's MAC starts, for verification


@dataclass(frozen=True)
class KeyInfo:
    """What a Reply's vendor option tells a host: the push key and the counter floor."""

    key: bytes
    counter: int
    msg_type: int


def iter_options(data: bytes, start: int) -> list[tuple[int, int, bytes]]:
    """(code, offset of body, body) for each option; raises TruncatedPush on a short option."""
    out = []
    pos = start
    while pos < len(data):
        if pos + 4 > len(data):
            raise TruncatedPush(f"option header cut at byte {pos} of {len(data)}")
        code, length = struct.unpack_from("!HH", data, pos)
        body_at = pos + 4
        if body_at + length > len(data):
            raise TruncatedPush(
                f"option {code} at byte {pos} claims {length} bytes, {len(data) - body_at} left"
            )
        out.append((code, body_at, data[body_at : body_at + length]))
        pos = body_at + length
    return out


def _parse_entry(body: bytes, at: int) -> PrefixEntry:
    if len(body) != PREFIX_OPTION_LEN:
        raise MalformedPush(f"prefix-status option at byte {at} has {len(body)} bytes, not 26")
    status, plen, pref, valid = struct.unpack_from("!BBII", body, 0)
    if status not in _STATUS_CODES:
        raise MalformedPush(f"unknown prefix status {status} at byte {at}")
    if plen > 128:
        raise MalformedPush(f"prefix length {plen} over 128 at byte {at}")
    try:
        prefix = ipaddress.IPv6Network((bytes(body[10:26]), plen), strict=True)
    except ValueError as exc:
        raise MalformedPush(f"bad prefix at byte {at}: {exc}") from None
    return PrefixEntry(prefix, _STATUS_CODES[status], pref, valid)


def parse_push(data: bytes, *, msg_type: int = DEFAULT_MSG_TYPE) -> Push:
    """Parse (not verify) a push. Raises a PushError subclass for anything off-spec."""
    if len(data) < 4:
        raise TruncatedPush(f"{len(data)} bytes: shorter than the 4-byte header")
    if data[0] != msg_type:
        raise MalformedPush(f"message type {data[0]}, expected {msg_type}")
    trid = int.from_bytes(data[1:4], "big")
    server: bytes | None = None
    entries: list[PrefixEntry] = []
    options = iter_options(data, 4)
    if not options or options[-1][0] != OPT_AUTH:
        raise UnauthenticatedPush("no authentication option at the end of the push")
    for code, at, body in options[:-1]:
        if code == OPT_SERVERID:
            if server is not None:
                raise MalformedPush("two server identifiers")
            if not 1 <= len(body) <= 130:
                raise MalformedPush(f"server identifier of {len(body)} bytes")
            server = bytes(body)
        elif code == OPT_MAST_PREFIX_STATUS:
            entries.append(_parse_entry(body, at))
        elif code == OPT_AUTH:
            raise MalformedPush("authentication option not last")
        # Other options are skipped: later versions may add some (PUSH.md, "Extensibility").
    if server is None:
        raise MalformedPush("no server identifier")
    _, auth_at, auth = options[-1]
    if len(auth) != AUTH_LEN:
        raise MalformedPush(f"authentication option of {len(auth)} bytes, not {AUTH_LEN}")
    proto, alg, rdm, counter, atype = struct.unpack_from("!BBBQB", auth, 0)
    if (proto, alg, rdm, atype) != (
        AUTH_PROTO_RECONFKEY,
        AUTH_ALG_HMAC_SHA256,
        AUTH_RDM_COUNTER,
        AUTH_TYPE_MAC,
    ):
        raise UnauthenticatedPush(
            f"authentication protocol/algorithm/rdm/type {proto}/{alg}/{rdm}/{atype} unsupported"
        )
    return Push(
        msg_type=data[0],
        transaction_id=trid,
        server_duid=server,
        entries=tuple(entries),
        counter=counter,
        mac=bytes(auth[12:]),
        auth_offset=auth_at + 12,
    )


def compute_mac(data: bytes, mac_offset: int, key: bytes) -> bytes:
    """HMAC-SHA256 over the message with its MAC field zeroed."""
    zeroed = data[:mac_offset] + bytes(MAC_LEN) + data[mac_offset + MAC_LEN :]
    return hmac.new(key, zeroed, hashlib.sha256).digest()


def encode_push(
    entries: list[PrefixEntry] | tuple[PrefixEntry, ...],
    *,
    key: bytes,
    counter: int,
    server_duid: bytes = b"\x00\x04mast-test-server",
    msg_type: int = DEFAULT_MSG_TYPE,
) -> bytes:
    """A signed push, byte for byte what the Kea hook sends (the second implementation)."""
    out = bytearray([msg_type]) + (counter & 0xFFFFFF).to_bytes(3, "big")
    out += struct.pack("!HH", OPT_SERVERID, len(server_duid)) + server_duid
    for e in entries:
        body = struct.pack(
            "!BBII", _STATUS_VALUES[e.status], e.prefix.prefixlen, e.preferred_lifetime,
            e.valid_lifetime,
        ) + e.prefix.network_address.packed
        out += struct.pack("!HH", OPT_MAST_PREFIX_STATUS, len(body)) + body
    auth = struct.pack(
        "!BBBQB", AUTH_PROTO_RECONFKEY, AUTH_ALG_HMAC_SHA256, AUTH_RDM_COUNTER, counter,
        AUTH_TYPE_MAC,
    )
    out += struct.pack("!HH", OPT_AUTH, AUTH_LEN) + auth
    mac_at = len(out)
    out += bytes(MAC_LEN)
    out[mac_at:] = compute_mac(bytes(out), mac_at, key)
    return bytes(out)


def find_key_info(reply: bytes, *, enterprise_id: int = DEFAULT_ENTERPRISE_ID) -> KeyInfo | None:
    """The push key from a DHCPv6 Reply's vendor option, or None when it has none."""
    if len(reply) < 4 or reply[0] != MSG_REPLY:
        return None
    try:
        options = iter_options(reply, 4)
    except PushError:
        return None
    for code, _, body in options:
        if code != OPT_VENDOR_OPTS or len(body) < 4:
            continue
        if int.from_bytes(body[:4], "big") != enterprise_id:
            continue
        try:
            subs = {c: b for c, _, b in iter_options(body, 4)}
        except PushError:
            return None
        key = subs.get(VSO_PUSH_KEY)
        counter = subs.get(VSO_PUSH_COUNTER)
        mtype = subs.get(VSO_PUSH_MSG_TYPE)
        if key is None or len(key) < 16 or counter is None or len(counter) != 8:
            return None
        return KeyInfo(
            bytes(key),
            int.from_bytes(counter, "big"),
            mtype[0] if mtype and len(mtype) == 1 else DEFAULT_MSG_TYPE,
        )
    return None
