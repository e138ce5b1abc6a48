"""Where snapshots come from: local files, globs and archive-like directories (the default).

Each snapshot is placed in time and attributed to a collector. Names laid out like the RouteViews
archive (`[<collector>/]bgpdata/YYYY.MM/RIBS/rib.YYYYMMDD.HHMM.bz2`) or RIS
(`rrcNN/YYYY.MM/bview.YYYYMMDD.HHMM.gz`) give both; any other file is placed by the timestamp of
its first MRT record and attributed to the collector "local".
"""

from __future__ import annotations

import bz2
import glob
import gzip
import os
import re
import struct
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from mast_common.log import get_logger

log = get_logger(__name__)

LOCAL = "local"
SEED_DAY = 5  # the seed took "the first RIB on day 5 of each month"
_STAMP = re.compile(r"(?<!\d)(\d{8})[._-](\d{4})(?!\d)")
_EPOCH = re.compile(r"(?<!\d)(\d{10})(?!\d)")
_RIB_NAME = re.compile(r"(^|[._-])(rib|bview)([._-]|$)", re.IGNORECASE)
_MRT_SUFFIXES = (".mrt", ".dump")


class SourceError(Exception):
    """A source spec that names nothing usable (the message says which and why)."""


@dataclass(frozen=True, order=True)
class SnapshotRef:
    """One RIB dump to analyse: sortable by time, then collector, then path."""

    dump_time: datetime
    collector: str
    path: str

    @property
    def month(self) -> str:
        return f"{self.dump_time:%Y-%m}"


def mrt_timestamp(path: Path) -> datetime:
    """The timestamp of the first MRT record (decompressing only its first bytes)."""
    with path.open("rb") as raw:
        magic = raw.read(3)
    opener = gzip.open if magic[:2] == b"\x1f\x8b" else bz2.open if magic == b"BZh" else open
    try:
        with opener(path, "rb") as f:
            head = f.read(4)
    except (OSError, EOFError, zlib.error) as exc:
        raise SourceError(f"{path}: cannot read the first MRT record: {exc}") from exc
    if len(head) < 4:
        raise SourceError(f"{path}: shorter than one MRT header, cannot place it in time")
    return datetime.fromtimestamp(struct.unpack("!I", head)[0], tz=UTC)


def time_from_name(path: Path) -> datetime | None:
    m = _STAMP.search(path.name)
    if m:
        try:
            return datetime.strptime(m.group(1) + m.group(2), "%Y%m%d%H%M").replace(tzinfo=UTC)
        except ValueError:
            return None
    m = _EPOCH.search(path.name)
    if m:
        return datetime.fromtimestamp(int(m.group(1)), tz=UTC)
    return None


def collector_from_path(path: Path) -> str:
    parts = path.parts
    if "bgpdata" in parts:
        i = len(parts) - 1 - parts[::-1].index("bgpdata")
        before = parts[i - 1] if i > 0 else ""
        # The archive keeps route-views2 at its root and every other collector in a folder.
        return before if before.startswith("route-views") else "route-views2"
    for part in reversed(parts[:-1]):
        if re.fullmatch(r"rrc\d\d", part):
            return part
    return LOCAL


def snapshot_ref(path: Path) -> SnapshotRef:
    when = time_from_name(path) or mrt_timestamp(path)
    return SnapshotRef(when, collector_from_path(path), str(path))


def _looks_like_dump(path: Path) -> bool:
    name = path.name
    for ext in (".bz2", ".gz"):
        name = name.removesuffix(ext)
    return bool(_RIB_NAME.search(path.name)) or name.endswith(_MRT_SUFFIXES)


def expand(specs: Iterable[str]) -> list[Path]:
    """Files named by `specs`: files as given, globs expanded, directories walked for dumps."""
    found: dict[str, Path] = {}
    for spec in specs:
        p = Path(spec)
        if p.is_file():
            matches = [p]
        elif p.is_dir():
            matches = [
                Path(root) / f
                for root, _dirs, files in os.walk(p)
                for f in files
                if _looks_like_dump(Path(f)) and not f.endswith(".part")
            ]
            if not matches:
                raise SourceError(f"{spec}: directory holds no RIB dumps (rib.*, bview.*, *.mrt)")
        elif glob.has_magic(spec):
            matches = [Path(m) for m in glob.glob(spec, recursive=True) if Path(m).is_file()]
            if not matches:
                raise SourceError(f"{spec}: glob matches no files")
        else:
            raise SourceError(f"{spec}: no such file or directory")
        for m in matches:
            found.setdefault(str(m.resolve()), m.resolve())
    return sorted(found.values())


def monthly(refs: Sequence[SnapshotRef], day: int = SEED_DAY) -> list[SnapshotRef]:
    """One snapshot per (collector, month): the first dumped on or after `day` of the month, else
    the last one before it (so a month is never lost to a missing day)."""
    if not 1 <= day <= 31:
        raise SourceError(f"day {day} is not a day of the month")
    groups: dict[tuple[str, str], list[SnapshotRef]] = {}
    for ref in sorted(refs):
        groups.setdefault((ref.collector, ref.month), []).append(ref)
    chosen = []
    for (collector, month), group in sorted(groups.items()):
        on_or_after = [r for r in group if r.dump_time.day >= day]
        pick = on_or_after[0] if on_or_after else group[-1]
        if len(group) > 1:
            log.info(
                "history.month_pick",
                collector=collector,
                month=month,
                chosen=pick.path,
                skipped=len(group) - 1,
            )
        chosen.append(pick)
    return chosen


def local_snapshots(
    specs: Sequence[str],
    *,
    collector: str | None = None,
    day: int = SEED_DAY,
    since: str | None = None,
    until: str | None = None,
) -> list[SnapshotRef]:
    """The monthly snapshots named by `specs`, one collector, within [since, until] (YYYY-MM)."""
    refs = [snapshot_ref(p) for p in expand(specs)]
    if collector is not None:
        refs = [r for r in refs if r.collector == collector]
        if not refs:
            raise SourceError(f"no snapshot of collector {collector!r} in {list(specs)}")
    refs = [
        r
        for r in refs
        if (since is None or r.month >= since) and (until is None or r.month <= until)
    ]
    if not refs:
        raise SourceError(f"no snapshot in {list(specs)} within {since or '…'}..{until or '…'}")
    collectors = sorted({r.collector for r in refs})
    if len(collectors) > 1:
        raise SourceError(
            f"inputs span collectors {', '.join(collectors)}: a series follows one; "
            "choose with --collector"
        )
    return monthly(refs, day)
