"""RouteViews/RIS snapshots through pybgpstream (optional: the `bgpstream` extra + libbgpstream).

For each month the first RIB dump on a chosen day (the seed used day 5) is read through
BGPStream and written once as a local TABLE_DUMP_V2 file under the cache directory; from there it
takes the same decode → classify → content-hash cache path as any local dump, so a second run
fetches and decodes nothing.
"""

from __future__ import annotations

import importlib
import ipaddress
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import ModuleType
from typing import Any

from mast_common.log import get_logger
from rib_analysis.history.mrtdump import Peer, Route, write_rib_file
from rib_analysis.history.series import month_index
from rib_analysis.history.sources import SnapshotRef, SourceError

log = get_logger(__name__)

PREFIX = "bgpstream:"
INSTALL_HINT = (
    "the bgpstream source needs pybgpstream and its C library libbgpstream: install libbgpstream "
    "(https://bgpstream.caida.org/docs/install/bgpstream — CAIDA's apt repository has "
    "libbgpstream2-dev), then `pip install 'mast-toolkit[bgpstream]'`; local MRT files "
    "(paths, globs, archive directories) work without it"
)


class BgpstreamUnavailable(Exception):
    """pybgpstream (or the libbgpstream under it) cannot be imported."""


@dataclass(frozen=True)
class StreamSpec:
    project: str  # "routeviews" or "ris"
    collector: str  # "route-views2", "rrc00", ...

    @classmethod
    def parse(cls, spec: str) -> StreamSpec:
        m = re.fullmatch(r"bgpstream:([\w.-]+)/([\w.-]+)", spec)
        if not m:
            raise SourceError(
                f"{spec}: a BGPStream source is bgpstream:PROJECT/COLLECTOR, "
                "e.g. bgpstream:routeviews/route-views2 or bgpstream:ris/rrc00"
            )
        return cls(m.group(1), m.group(2))


def is_stream_spec(spec: str) -> bool:
    return spec.startswith(PREFIX)


def load_pybgpstream() -> ModuleType:
    try:
        return importlib.import_module("pybgpstream")
    except ImportError as exc:  # also raised when libbgpstream.so is missing under it
        raise BgpstreamUnavailable(f"{INSTALL_HINT} ({exc})") from exc


def months(since: str, until: str) -> Iterator[str]:
    first, last = month_index(since), month_index(until)
    if last < first:
        raise SourceError(f"--until {until} is before --since {since}")
    for i in range(first, last + 1):
        yield f"{i // 12:04d}-{i % 12 + 1:02d}"


def _asn(token: str) -> int:
    asn = int(token)
    if not 0 <= asn <= 0xFFFFFFFF:
        raise ValueError(f"ASN {token} out of range")
    return asn


def path_hops(text: str) -> tuple[int | tuple[int, ...], ...]:
    """An AS path as BGPStream prints it ("1 2 {3,4}"); ValueError when it is not one."""
    hops: list[int | tuple[int, ...]] = []
    for token in text.split():
        if token.startswith("{") and token.endswith("}"):
            members = {_asn(a) for a in token[1:-1].split(",") if a}
            if not members:
                raise ValueError("empty AS_SET")
            hops.append(tuple(sorted(members)))
        else:
            hops.append(_asn(token))
    return tuple(hops)


def fetch_month(
    module: ModuleType, spec: StreamSpec, month: str, day: int, cache: Path
) -> SnapshotRef | None:
    """The first RIB dump of `spec` on `day` of `month`, written under `cache` (once)."""
    folder = cache / spec.project / spec.collector / month
    done = sorted(folder.glob("rib.*.mrt.gz")) if folder.is_dir() else []
    if done:
        return _ref(done[0], spec)
    year, mon = (int(x) for x in month.split("-"))
    start = datetime(year, mon, day, tzinfo=UTC)
    stream: Any = module.BGPStream(
        from_time=f"{start:%Y-%m-%d %H:%M:%S}",
        until_time=f"{start + timedelta(days=1) - timedelta(seconds=1):%Y-%m-%d %H:%M:%S}",
        projects=[spec.project],
        collectors=[spec.collector],
        record_type="ribs",
    )
    peers: dict[tuple[int, str], int] = {}
    routes: list[Route] = []
    unreadable = 0
    dump_time: int | None = None
    for rec in stream.records():
        if dump_time is None:
            dump_time = int(rec.dump_time)
        elif int(rec.dump_time) != dump_time:
            break  # only the first dump of the day
        for elem in rec:
            if elem.type != "R":
                continue
            try:
                path = path_hops(elem.fields.get("as-path", ""))
                prefix = str(ipaddress.ip_network(elem.fields["prefix"]))
                key = (_asn(str(elem.peer_asn)), str(ipaddress.ip_address(elem.peer_address)))
            except (ValueError, KeyError):
                unreadable += 1  # one bad element must not cost the month
                continue
            routes.append(Route(prefix, peers.setdefault(key, len(peers)), path))
    if dump_time is None:
        log.warning("history.bgpstream_no_dump", collector=spec.collector, month=month, day=day)
        return None
    when = datetime.fromtimestamp(dump_time, tz=UTC)
    target = folder / f"rib.{when:%Y%m%d.%H%M}.mrt.gz"
    peer_list = [Peer(asn=asn, address=addr) for (asn, addr) in peers]
    entries = write_rib_file(target, dump_time, peer_list, routes)
    log.info(
        "history.bgpstream_fetched",
        collector=spec.collector,
        month=month,
        entries=entries,
        unreadable=unreadable,
    )
    return _ref(target, spec)


def _ref(path: Path, spec: StreamSpec) -> SnapshotRef:
    m = re.search(r"rib\.(\d{8})\.(\d{4})", path.name)
    if not m:
        raise SourceError(f"{path}: not a file this source wrote")
    when = datetime.strptime(m.group(1) + m.group(2), "%Y%m%d%H%M").replace(tzinfo=UTC)
    return SnapshotRef(when, spec.collector, str(path))


def stream_snapshots(
    spec_text: str,
    *,
    since: str | None,
    until: str | None,
    day: int,
    cache: Path,
    module: ModuleType | None = None,
) -> list[SnapshotRef]:
    """One snapshot per month in [since, until] for the collector named by `spec_text`."""
    spec = StreamSpec.parse(spec_text)
    if since is None or until is None:
        raise SourceError(f"{spec_text}: a BGPStream source needs --since and --until (YYYY-MM)")
    mod = module or load_pybgpstream()
    refs = []
    for month in months(since, until):
        ref = fetch_month(mod, spec, month, day, cache)
        if ref is not None:
            refs.append(ref)
    return refs
