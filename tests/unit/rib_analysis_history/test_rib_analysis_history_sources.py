"""Finding snapshots: archive layouts, names, MRT timestamps, one per month, one collector."""

from __future__ import annotations

import gzip
from datetime import UTC, datetime
from pathlib import Path

import pytest
from rib_analysis.history.mrtdump import Peer, Route, write_rib_file
from rib_analysis.history.sources import (
    LOCAL,
    SnapshotRef,
    SourceError,
    collector_from_path,
    expand,
    local_snapshots,
    monthly,
    mrt_timestamp,
    time_from_name,
)

PEERS = [Peer(3356, "198.51.100.1")]


def dump(path: Path, when: datetime) -> Path:
    write_rib_file(path, int(when.timestamp()), PEERS, [Route("192.0.2.0/24", 0, (3356, 1, 2))])
    return path


def test_names() -> None:
    assert time_from_name(Path("rib.20121201.0600.bz2")) == datetime(2012, 12, 1, 6, 0, tzinfo=UTC)
    assert time_from_name(Path("bview.20000111.0032.gz")) == datetime(
        2000, 1, 11, 0, 32, tzinfo=UTC
    )
    assert time_from_name(Path("rv-route-views.jinx-rib.1401487200.bz2")) == datetime(
        2014, 5, 30, 22, 0, tzinfo=UTC
    )
    assert time_from_name(Path("my-table.mrt")) is None
    assert time_from_name(Path("rib.20121341.0000.bz2")) is None  # not a date
    assert (
        collector_from_path(Path("/a/route-views.linx/bgpdata/2012.12/RIBS/rib.x"))
        == "route-views.linx"
    )
    assert collector_from_path(Path("/archive/bgpdata/2012.12/RIBS/rib.x")) == "route-views2"
    assert collector_from_path(Path("/ris/rrc00/2012.12/bview.x.gz")) == "rrc00"
    assert collector_from_path(Path("/tmp/rib.x")) == LOCAL


@pytest.mark.parametrize("suffix", ["", ".gz", ".bz2"])
def test_mrt_timestamp_any_compression(tmp_path: Path, suffix: str) -> None:
    when = datetime(2013, 3, 5, 12, 0, tzinfo=UTC)
    assert mrt_timestamp(dump(tmp_path / f"t.mrt{suffix}", when)) == when


def test_mrt_timestamp_errors(tmp_path: Path) -> None:
    short = tmp_path / "short.mrt"
    short.write_bytes(b"\x00\x01")
    with pytest.raises(SourceError, match=r"short.mrt: shorter than one MRT header"):
        mrt_timestamp(short)
    bad = tmp_path / "bad.gz"
    bad.write_bytes(b"\x1f\x8b" + b"\xff" * 20)
    with pytest.raises(SourceError, match=r"bad.gz: cannot read"):
        mrt_timestamp(bad)


def test_directory_glob_and_file(tmp_path: Path) -> None:
    root = tmp_path / "route-views.sydney" / "bgpdata"
    a = dump(root / "2012.01/RIBS/rib.20120101.0000.bz2", datetime(2012, 1, 1, tzinfo=UTC))
    b = dump(root / "2012.01/RIBS/rib.20120105.0200.bz2", datetime(2012, 1, 5, 2, tzinfo=UTC))
    c = dump(root / "2012.02/RIBS/rib.20120206.0000.bz2", datetime(2012, 2, 6, tzinfo=UTC))
    (root / "2012.01/RIBS/README").write_text("not a dump")
    (root / "2012.01/RIBS/distribution.txt").write_text("not a dump either")
    (root / "2012.02/RIBS/rib.20120207.0000.bz2.part").write_text("being written")
    assert expand([str(tmp_path)]) == sorted([a, b, c])
    assert expand([str(root / "*/RIBS/rib.201201*")]) == sorted([a, b])
    assert expand([str(c), str(c)]) == [c]
    refs = local_snapshots([str(tmp_path)])
    assert [(r.month, Path(r.path).name, r.collector) for r in refs] == [
        ("2012-01", "rib.20120105.0200.bz2", "route-views.sydney"),
        ("2012-02", "rib.20120206.0000.bz2", "route-views.sydney"),
    ]
    assert [Path(r.path) for r in local_snapshots([str(tmp_path)], day=1)] == [a, c]
    assert [Path(r.path) for r in local_snapshots([str(tmp_path)], since="2012-02")] == [c]


def test_undated_file_placed_by_its_first_record(tmp_path: Path) -> None:
    f = dump(tmp_path / "table.mrt", datetime(2019, 7, 9, 8, 0, tzinfo=UTC))
    (ref,) = local_snapshots([str(f)])
    assert ref == SnapshotRef(datetime(2019, 7, 9, 8, 0, tzinfo=UTC), LOCAL, str(f.resolve()))


def test_month_pick_falls_back_to_the_last_before_the_day() -> None:
    t = lambda d: datetime(2010, 3, d, tzinfo=UTC)  # noqa: E731
    refs = [SnapshotRef(t(1), "c", "a"), SnapshotRef(t(3), "c", "b")]
    assert [r.path for r in monthly(refs, day=5)] == ["b"]
    assert [r.path for r in monthly(refs, day=2)] == ["b"]
    assert [r.path for r in monthly(refs, day=1)] == ["a"]
    with pytest.raises(SourceError, match="day 32"):
        monthly(refs, day=32)


def test_errors_name_the_spec(tmp_path: Path) -> None:
    with pytest.raises(SourceError, match="nope: no such file"):
        local_snapshots([str(tmp_path / "nope")])
    with pytest.raises(SourceError, match=r"\*.bz2: glob matches no files"):
        local_snapshots([str(tmp_path / "*.bz2")])
    (tmp_path / "empty").mkdir()
    with pytest.raises(SourceError, match="holds no RIB dumps"):
        local_snapshots([str(tmp_path / "empty")])
    one = dump(
        tmp_path / "x/rrc00/2001.01/bview.20010105.0000.gz", datetime(2001, 1, 5, tzinfo=UTC)
    )
    two = dump(
        tmp_path / "x/rrc01/2001.01/bview.20010105.0000.gz", datetime(2001, 1, 5, tzinfo=UTC)
    )
    with pytest.raises(SourceError, match=r"span collectors rrc00, rrc01: .*--collector"):
        local_snapshots([str(one), str(two)])
    assert [r.path for r in local_snapshots([str(tmp_path / "x")], collector="rrc01")] == [str(two)]
    with pytest.raises(SourceError, match="no snapshot of collector 'rrc99'"):
        local_snapshots([str(one)], collector="rrc99")
    with pytest.raises(SourceError, match="within 2002-01"):
        local_snapshots([str(one)], since="2002-01")


def test_gzip_written_dump_is_valid_gzip(tmp_path: Path) -> None:
    f = dump(tmp_path / "d.gz", datetime(2001, 1, 1, tzinfo=UTC))
    assert gzip.decompress(f.read_bytes())[4:6] == b"\x00\x0d"  # TABLE_DUMP_V2
