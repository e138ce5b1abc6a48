"""A tiny MRT writer (RFC 6396, RFC 8050) for known-answer tests and fuzz seeds.

Loaded by path from the rib-analysis tests (pytest's importlib mode has no test packages).
"""

from __future__ import annotations

import ipaddress
import struct
from collections.abc import Sequence

TS = 1_700_000_000
AS_SET, AS_SEQUENCE = 1, 2
Segment = tuple[int, Sequence[int]]


def mrt(mtype: int, subtype: int, body: bytes, ts: int = TS) -> bytes:
    return struct.pack(">IHHI", ts, mtype, subtype, len(body)) + body


def attr(flags: int, atype: int, value: bytes) -> bytes:
    if len(value) > 255:
        return struct.pack(">BBH", flags | 0x10, atype, len(value)) + value
    return struct.pack(">BBB", flags, atype, len(value)) + value


def path_value(segments: Sequence[Segment], size: int = 4) -> bytes:
    fmt = ">I" if size == 4 else ">H"
    out = b""
    for stype, asns in segments:
        for i in range(0, max(1, len(asns)), 255):  # a segment holds at most 255 ASNs
            part = asns[i : i + 255]
            out += struct.pack(">BB", stype, len(part)) + b"".join(
                struct.pack(fmt, a) for a in part
            )
    return out


def attrs(
    path: Sequence[int] | Sequence[Segment] | None,
    *,
    size: int = 4,
    as4: Sequence[int] | None = None,
) -> bytes:
    """ORIGIN + AS_PATH (a plain ASN list is one AS_SEQUENCE) [+ AS4_PATH] + NEXT_HOP."""
    out = attr(0x40, 1, b"\x00")
    if path is not None:
        segs: Sequence[Segment] = (
            [(AS_SEQUENCE, list(path))] if path and isinstance(path[0], int) else path  # type: ignore[list-item]
        )
        out += attr(0x40, 2, path_value(segs, size))
    if as4 is not None:
        out += attr(0xC0, 17, path_value([(AS_SEQUENCE, list(as4))], 4))
    return out + attr(0x40, 3, bytes([192, 0, 2, 1]))


def peer_index_table(peers: Sequence[tuple[str, int]]) -> bytes:
    body = bytes([10, 0, 0, 1]) + struct.pack(">H", 4) + b"test" + struct.pack(">H", len(peers))
    for ip, asn in peers:
        addr = ipaddress.ip_address(ip)
        ptype = (1 if addr.version == 6 else 0) | 2
        body += bytes([ptype]) + bytes([10, 0, 0, 9]) + addr.packed + struct.pack(">I", asn)
    return mrt(13, 1, body)


def _prefix(prefix: str) -> tuple[int, bytes, int]:
    net = ipaddress.ip_network(prefix)
    nbytes = (net.prefixlen + 7) // 8
    return net.version, net.network_address.packed[:nbytes], net.prefixlen


def rib_v2(
    seq: int,
    prefix: str,
    entries: Sequence[tuple[int, bytes]],
    *,
    addpath: bool = False,
    subtype: int | None = None,
) -> bytes:
    version, pbytes, plen = _prefix(prefix)
    if subtype is None:
        subtype = (4 if version == 6 else 2) + (6 if addpath else 0)
    body = struct.pack(">IB", seq, plen) + pbytes + struct.pack(">H", len(entries))
    for peer, a in entries:
        body += struct.pack(">HI", peer, TS - 100)
        if addpath:
            body += struct.pack(">I", 7)
        body += struct.pack(">H", len(a)) + a
    return mrt(13, subtype, body)


def table_dump(prefix: str, peer_ip: str, peer_as: int, a: bytes) -> bytes:
    """Legacy TABLE_DUMP (2-byte ASNs in AS_PATH)."""
    net = ipaddress.ip_network(prefix)
    subtype = 2 if net.version == 6 else 1
    body = (
        struct.pack(">HH", 0, 0)
        + net.network_address.packed
        + struct.pack(">BBI", net.prefixlen, 1, TS - 100)
        + ipaddress.ip_address(peer_ip).packed
        + struct.pack(">HH", peer_as, len(a))
        + a
    )
    return mrt(12, subtype, body)


# The known-answer table (METHOD.md's rules, one by one). ASNs:
C, Q = 6939, 15169  # collector peers; Q also originates one prefix (path of length one)
T1, T2 = 3356, 174  # transit
A, B = 100, 200  # providers of the stubs
S1, S2, S3, S4, S6 = 1001, 1002, 1003, 401308, 1006  # stubs; S4 needs 4 bytes


def known_rib() -> bytes:
    """Every rule once; expected answers in test_rib_analysis_known.py."""
    p = [("192.0.2.1", C), ("192.0.2.2", Q), ("2001:db8:ffff::1", C)]
    out = peer_index_table(p)
    recs = [
        ("10.0.0.0/8", [(0, attrs([C, T1, A]))]),
        # A's own more-specific: in the table today, not under MAST (A announces 10/8 only)
        ("10.3.0.0/16", [(0, attrs([C, T1, A]))]),
        ("20.0.0.0/8", [(0, attrs([C, T2, B]))]),
        # prepending; and the same stub seen through the second collector peer
        ("10.1.0.0/16", [(0, attrs([C, T1, A, S1, S1, S1])), (1, attrs([Q, T1, A, S1]))]),
        ("30.0.0.0/16", [(0, attrs([C, T2, B, S2]))]),
        ("10.2.0.0/16", [(0, attrs([C, T1, A, S3]))]),
        # S3 reaches the collector through B and straight through T1: three upstreams
        ("40.0.0.0/16", [(0, attrs([C, T2, B, S3])), (1, attrs([Q, T1, S3]))]),
        ("20.5.0.0/16", [(0, attrs([C, T1, A, S4]))]),
        # an AS_SET at the end: the set is dropped, A is taken as the origin
        ("50.0.0.0/16", [(0, attrs([(AS_SEQUENCE, [C, T1, A]), (AS_SET, [1005, S6])]))]),
        # a private origin: dropped, B is taken as the origin
        ("60.0.0.0/16", [(0, attrs([C, T2, B, 64512]))]),
        # the collector peer Q originates (path of length one)
        ("70.0.0.0/16", [(1, attrs([Q]))]),
    ]
    for seq, (prefix, entries) in enumerate(recs):
        out += rib_v2(seq, prefix, entries)
    out += rib_v2(90, "2001:db8::/32", [(2, attrs([C, T1, A]))])
    out += rib_v2(91, "2001:db8:1::/48", [(2, attrs([C, T1, A, S6]))], addpath=True)
    # skipped: multicast RIB, and a BGP4MP record
    out += rib_v2(92, "80.0.0.0/16", [(0, attrs([C, T1, 9999]))], subtype=3)
    out += mrt(16, 4, b"\x00" * 20)
    # legacy TABLE_DUMP with 2-byte AS_PATH: AS_TRANS (prepended) resolved by AS4_PATH
    out += table_dump(
        "20.5.0.0/16", "192.0.2.1", C, attrs([C, T2, B, 23456, 23456], size=2, as4=[B, S4, S4])
    )
    return out


KNOWN_ENTRIES = 16
