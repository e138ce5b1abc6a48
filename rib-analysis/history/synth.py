"""Synthetic monthly RIB series with a known answer (for tests and `bench_rib_history --quick`).

A `Topology` says which ASNs are providers (each with an aggregate it originates) and which are
stubs (upstreams + prefixes). `routes` turns it into RIB entries seen from a few collector peers
so every upstream of every stub is visible and every peer also appears mid-path (peers are
providers under any reading of the seed's rule).
"""

from __future__ import annotations

import ipaddress
import itertools
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from rib_analysis.history.mrtdump import Peer, Route, write_rib_file

PEER_ASNS = (3356, 1299, 174)  # collector peers; none is private, reserved or AS_TRANS


@dataclass(frozen=True)
class StubSpec:
    upstreams: tuple[int, ...]
    prefixes: tuple[str, ...]


@dataclass(frozen=True)
class Topology:
    providers: Mapping[int, str]  # provider ASN -> the aggregate it originates
    stubs: Mapping[int, StubSpec] = field(default_factory=dict)


def peers() -> list[Peer]:
    return [
        Peer(asn=asn, address=f"198.51.100.{i + 1}", bgp_id=f"198.51.100.{i + 1}")
        for i, asn in enumerate(PEER_ASNS)
    ]


def routes(topology: Topology) -> list[Route]:
    """Entries from every peer: peer k reaches a stub through its upstream number k mod degree."""
    k_peers = len(PEER_ASNS)
    out: list[Route] = []
    for k, peer in enumerate(PEER_ASNS):
        transit = PEER_ASNS[(k + 1) % k_peers]
        for asn, aggregate in topology.providers.items():
            out.append(Route(aggregate, k, (peer, transit, asn)))
        for asn, stub in topology.stubs.items():
            if not stub.upstreams:
                raise ValueError(f"stub AS{asn} has no upstream")
            upstream = stub.upstreams[k % len(stub.upstreams)]
            for prefix in stub.prefixes:
                out.append(Route(prefix, k, (peer, transit, upstream, asn)))
    return out


def month_label(start: str, offset: int) -> str:
    year, month = (int(x) for x in start.split("-"))
    index = year * 12 + month - 1 + offset
    return f"{index // 12:04d}-{index % 12 + 1:02d}"


def write_series(
    root: Path,
    topologies: Sequence[Topology],
    *,
    start: str = "2011-01",
    day: int = 5,
    suffix: str = ".gz",
) -> list[Path]:
    """One dump per month laid out like the RouteViews archive: bgpdata/YYYY.MM/RIBS/rib.*."""
    paths = []
    for i, topology in enumerate(topologies):
        year, month = (int(x) for x in month_label(start, i).split("-"))
        when = datetime(year, month, day, 0, 0, tzinfo=UTC)
        name = f"rib.{when:%Y%m%d.%H%M}.mrt{suffix}"
        path = root / "bgpdata" / f"{when:%Y.%m}" / "RIBS" / name
        write_rib_file(path, int(when.timestamp()), peers(), routes(topology))
        paths.append(path)
    return paths


def random_series(
    months: int, *, providers: int = 50, stubs: int = 2000, change_rate: float = 0.02, seed: int = 1
) -> list[Topology]:
    """A random but plausible series: heavy-tailed provider popularity, ~40% multihomed stubs,
    mostly /24 PI blocks, and `change_rate` of stubs gaining or losing a provider each month."""
    rng = random.Random(seed)
    provider_asns = [1000 + i for i in range(providers)]
    aggregates = {
        asn: str(ipaddress.ip_network((0x80000000 + i * (1 << 18), 14)))
        for i, asn in enumerate(provider_asns)
    }
    cum_weights = list(itertools.accumulate(1.0 / (i + 1) for i in range(providers)))
    cursor = 0x40000000
    specs: dict[int, StubSpec] = {}
    for i in range(stubs):
        degree = 1 if rng.random() < 0.6 else rng.choice((2, 2, 2, 3))
        ups: set[int] = set()
        while len(ups) < degree:
            ups.add(rng.choices(provider_asns, cum_weights=cum_weights)[0])
        length = rng.choices((24, 23, 22, 20, 16), (60, 12, 12, 10, 6))[0]
        size = 1 << (32 - length)
        cursor = (cursor + size - 1) // size * size
        prefixes = [str(ipaddress.ip_network((cursor, length)))]
        cursor += size
        if rng.random() < 0.3:  # a PA sub-block from its first upstream as well
            base = int(ipaddress.ip_network(aggregates[min(ups)]).network_address)
            prefixes.append(str(ipaddress.ip_network((base + (i % 1024) * 256, 24))))
        specs[200000 + i] = StubSpec(tuple(sorted(ups)), tuple(prefixes))
    series = [Topology(aggregates, dict(specs))]
    for _ in range(1, months):
        for asn in rng.sample(sorted(specs), int(stubs * change_rate)):
            spec = specs[asn]
            ups = set(spec.upstreams)
            if len(ups) > 1 and rng.random() < 0.5:
                ups.discard(rng.choice(sorted(ups)))
            else:
                ups.add(rng.choice(provider_asns))
            specs[asn] = StubSpec(tuple(sorted(ups)), spec.prefixes)
        series.append(Topology(aggregates, dict(specs)))
    return series
