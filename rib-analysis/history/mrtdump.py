"""A small TABLE_DUMP_V2 (RFC 6396) RIB writer.

Two uses: materialising a snapshot fetched through BGPStream as a local MRT file (so it takes the
same decode → classify → cache path as any local dump), and writing synthetic snapshot series for
tests and benchmarks. Writes what classification reads (AS_PATH as 4-byte AS_SEQUENCE segments,
ORIGIN, NEXT_HOP / abbreviated MP_REACH_NLRI) and nothing else.
"""

from __future__ import annotations

import bz2
import gzip
import ipaddress
import struct
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

MRT_TABLE_DUMP_V2 = 13
PEER_INDEX_TABLE = 1
RIB_IPV4_UNICAST = 2
RIB_IPV6_UNICAST = 4

ATTR_ORIGIN = 1
ATTR_AS_PATH = 2
ATTR_NEXT_HOP = 3
ATTR_MP_REACH_NLRI = 14
AS_SET = 1
AS_SEQUENCE = 2
FLAG_TRANSITIVE = 0x40
FLAG_OPTIONAL = 0x80
FLAG_EXTENDED = 0x10


@dataclass(frozen=True)
class Peer:
    asn: int
    address: str  # the peer's IP address (IPv4 or IPv6)
    bgp_id: str = "0.0.0.0"


@dataclass(frozen=True)
class Route:
    """One RIB entry: `prefix` as seen from peer number `peer` with `path` (first = the peer);
    a tuple inside the path is an AS_SET."""

    prefix: str
    peer: int
    path: tuple[int | tuple[int, ...], ...]


def _header(timestamp: int, subtype: int, body: bytes) -> bytes:
    return struct.pack("!IHHI", timestamp, MRT_TABLE_DUMP_V2, subtype, len(body)) + body


def _attribute(flags: int, code: int, value: bytes) -> bytes:
    if len(value) > 255:
        return struct.pack("!BBH", flags | FLAG_EXTENDED, code, len(value)) + value
    return struct.pack("!BBB", flags, code, len(value)) + value


def _segment(kind: int, asns: Sequence[int]) -> bytes:
    out = bytearray()
    for start in range(0, len(asns), 255):  # a segment holds at most 255 ASNs
        chunk = asns[start : start + 255]
        out += struct.pack("!BB", kind, len(chunk))
        out += b"".join(struct.pack("!I", asn) for asn in chunk)
    return bytes(out)


def _as_path(path: Sequence[int | tuple[int, ...]]) -> bytes:
    out = bytearray()
    run: list[int] = []
    for hop in path:
        if isinstance(hop, tuple):
            out += _segment(AS_SEQUENCE, run) + _segment(AS_SET, hop)
            run = []
        else:
            run.append(hop)
    return bytes(out + _segment(AS_SEQUENCE, run))


def _next_hop(peer: Peer, v6: bool) -> bytes:
    hop = ipaddress.ip_address(peer.address)
    if v6:
        nh = hop.packed if hop.version == 6 else ipaddress.IPv6Address("::ffff:" + str(hop)).packed
        # RFC 6396 4.3.4: in RIB entries MP_REACH_NLRI keeps only the next-hop length and address.
        return _attribute(FLAG_OPTIONAL, ATTR_MP_REACH_NLRI, bytes([len(nh)]) + nh)
    nh = hop.packed if hop.version == 4 else b"\x00\x00\x00\x00"
    return _attribute(FLAG_TRANSITIVE, ATTR_NEXT_HOP, nh)


_ORIGIN_IGP = _attribute(FLAG_TRANSITIVE, ATTR_ORIGIN, b"\x00")


def _attributes(path: Sequence[int | tuple[int, ...]], next_hop: bytes) -> bytes:
    return _ORIGIN_IGP + _attribute(FLAG_TRANSITIVE, ATTR_AS_PATH, _as_path(path)) + next_hop


def peer_index_table(timestamp: int, peers: Sequence[Peer], view: str = "") -> bytes:
    body = bytearray(ipaddress.IPv4Address("192.0.2.1").packed)
    name = view.encode()
    body += struct.pack("!H", len(name)) + name + struct.pack("!H", len(peers))
    for p in peers:
        addr = ipaddress.ip_address(p.address)
        peer_type = 0x02 | (0x01 if addr.version == 6 else 0)  # 4-byte ASN, address family
        body += struct.pack("!B", peer_type) + ipaddress.IPv4Address(p.bgp_id).packed
        body += addr.packed + struct.pack("!I", p.asn)
    return _header(timestamp, PEER_INDEX_TABLE, bytes(body))


def write_rib(out: BinaryIO, timestamp: int, peers: Sequence[Peer], routes: Iterable[Route]) -> int:
    """Write one RIB dump (routes grouped by prefix, in first-seen order); returns entries written."""
    by_prefix: dict[ipaddress.IPv4Network | ipaddress.IPv6Network, list[Route]] = {}
    for route in routes:
        if not 0 <= route.peer < len(peers):
            raise ValueError(f"route {route.prefix} names peer {route.peer} of {len(peers)}")
        by_prefix.setdefault(ipaddress.ip_network(route.prefix), []).append(route)
    out.write(peer_index_table(timestamp, peers))
    hops = [(_next_hop(p, False), _next_hop(p, True)) for p in peers]
    entries = 0
    for seq, (net, rs) in enumerate(by_prefix.items()):
        v6 = net.version == 6
        nbytes = (net.prefixlen + 7) // 8
        body = bytearray(struct.pack("!IB", seq, net.prefixlen))
        body += net.network_address.packed[:nbytes] + struct.pack("!H", len(rs))
        for r in rs:
            attrs = _attributes(r.path, hops[r.peer][v6])
            body += struct.pack("!HIH", r.peer, timestamp, len(attrs)) + attrs
        out.write(_header(timestamp, RIB_IPV6_UNICAST if v6 else RIB_IPV4_UNICAST, bytes(body)))
        entries += len(rs)
    return entries


def write_rib_file(
    path: Path, timestamp: int, peers: Sequence[Peer], routes: Iterable[Route]
) -> int:
    """`write_rib` into `path`, compressed by its suffix (.gz, .bz2, else plain)."""
    opener = {".gz": gzip.open, ".bz2": bz2.open}.get(path.suffix)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".part")
    with opener(tmp, "wb") if opener else tmp.open("wb") as out:  # type: ignore[operator]
        n = write_rib(out, timestamp, peers, routes)
    tmp.replace(path)  # a reader never sees half a dump
    return n
