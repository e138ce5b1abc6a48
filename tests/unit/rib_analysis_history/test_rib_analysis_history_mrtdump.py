"""The TABLE_DUMP_V2 writer, checked against an independent reader (mrtparse)."""

from __future__ import annotations

import ipaddress
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mrtparse import Reader
from rib_analysis.history.mrtdump import Peer, Route, write_rib_file

PEERS = [Peer(3356, "198.51.100.1"), Peer(4200000001, "2001:db8::1")]


def read_back(path: Path) -> list[tuple[str, int, tuple[object, ...]]]:
    out = []
    for entry in Reader(str(path)):
        d = entry.data
        if "rib_entries" not in d:
            assert list(d["subtype"]) == [1]  # PEER_INDEX_TABLE
            assert [int(p["peer_as"]) for p in d["peer_entries"]] == [p.asn for p in PEERS]
            continue
        prefix = str(ipaddress.ip_network(f"{d['prefix']}/{d['length']}"))
        for rib in d["rib_entries"]:
            hops: list[object] = []
            for attr in rib["path_attributes"]:
                if 2 in attr["type"]:
                    for seg in attr["value"]:
                        asns = [int(a) for a in seg["value"]]
                        hops += [tuple(asns)] if 1 in seg["type"] else asns
            out.append((prefix, rib["peer_index"], tuple(hops)))
    return out


def test_known_dump(tmp_path: Path) -> None:
    routes = [
        Route("192.0.2.0/24", 0, (3356, 1299, 64500)),
        Route("192.0.2.0/24", 1, (4200000001, 64500)),
        Route("2001:db8:100::/40", 1, (4200000001, 7, (8, 9))),
        Route("10.0.0.0/8", 0, (3356,) * 300),  # longer than one segment holds
    ]
    path = tmp_path / "rib.bz2"
    assert write_rib_file(path, 1_300_000_000, PEERS, routes) == 4
    assert not list(tmp_path.glob("*.part"))
    assert read_back(path) == [(str(r.prefix), r.peer, r.path) for r in routes]


prefixes = st.one_of(
    st.builds(
        lambda a, n: str(ipaddress.ip_network((a, n), strict=False)),
        st.integers(0, 2**32 - 1),
        st.integers(0, 32),
    ),
    st.builds(
        lambda a, n: str(ipaddress.ip_network((a, n), strict=False)),
        st.integers(0, 2**128 - 1).map(lambda a: ipaddress.IPv6Address(a)),
        st.integers(0, 128),
    ),
)
paths = st.lists(
    st.one_of(
        st.integers(1, 2**32 - 1),
        st.lists(st.integers(1, 2**32 - 1), min_size=1, max_size=3).map(
            lambda x: tuple(sorted(set(x)))
        ),
    ),
    max_size=8,
).map(tuple)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(prefixes, st.integers(0, 1), paths), max_size=12))
def test_any_routes_read_back(
    tmp_path_factory: pytest.TempPathFactory, rows: list[tuple[str, int, tuple[object, ...]]]
) -> None:
    tmp = tmp_path_factory.mktemp("w")
    routes = [Route(p, peer, path) for p, peer, path in rows]  # type: ignore[arg-type]
    write_rib_file(tmp / "d.mrt", 1, PEERS, routes)
    # The writer groups entries by prefix in first-seen order.
    order: dict[str, list[Route]] = {}
    for r in routes:
        order.setdefault(str(ipaddress.ip_network(r.prefix)), []).append(r)
    expected = [
        (p, r.peer, tuple(x for x in r.path if x != ())) for p, rs in order.items() for r in rs
    ]
    assert read_back(tmp / "d.mrt") == expected
