"""The BGPStream source: a clear message and exit 69 without pybgpstream; with a stand-in module
(libbgpstream cannot be installed here), one dump per month is materialised once as MRT."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

import pytest
from mast_common.cli import EXIT_UNAVAILABLE, EXIT_USAGE
from mrtparse import Reader
from rib_analysis.history import command
from rib_analysis.history.bgpstream import (
    BgpstreamUnavailable,
    StreamSpec,
    load_pybgpstream,
    months,
    stream_snapshots,
)
from rib_analysis.history.sources import SourceError


def test_missing_pybgpstream_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pybgpstream", None)  # makes the import fail
    with pytest.raises(BgpstreamUnavailable, match=r"pip install 'mast-toolkit\[bgpstream\]'"):
        load_pybgpstream()


def test_cli_exit_69_without_pybgpstream(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "pybgpstream", None)
    rc = command.main(
        [
            "bgpstream:routeviews/route-views2",
            "--since",
            "2011-01",
            "--until",
            "2011-02",
            "-o",
            str(tmp_path),
        ]
    )
    assert rc == EXIT_UNAVAILABLE
    err = capsys.readouterr().err
    assert "libbgpstream" in err and "mast-toolkit[bgpstream]" in err and "Traceback" not in err


def test_spec_and_months() -> None:
    assert StreamSpec.parse("bgpstream:ris/rrc00") == StreamSpec("ris", "rrc00")
    with pytest.raises(SourceError, match="bgpstream:PROJECT/COLLECTOR"):
        StreamSpec.parse("bgpstream:route-views2")
    assert list(months("2011-11", "2012-02")) == ["2011-11", "2011-12", "2012-01", "2012-02"]
    with pytest.raises(SourceError, match="before"):
        list(months("2012-02", "2011-11"))


def test_cli_usage_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert command.main(["bgpstream:ris/rrc00", "-o", str(tmp_path)]) == EXIT_USAGE
    assert "needs --since and --until" in capsys.readouterr().err
    assert command.main(["bgpstream:ris/rrc00", str(tmp_path), "-o", str(tmp_path)]) == EXIT_USAGE


@dataclass
class FakeElem:
    prefix: str
    path: str
    peer_asn: int
    peer_address: str
    type: str = "R"

    @property
    def fields(self) -> dict[str, str]:
        return {"prefix": self.prefix, "as-path": self.path}


@dataclass
class FakeRecord:
    dump_time: int
    elems: list[FakeElem] = field(default_factory=list)

    def __iter__(self) -> Any:
        return iter(self.elems)


class FakeBgpstream(ModuleType):
    """Stands in for pybgpstream: two dumps on each requested day; the first must be the one kept."""

    def __init__(self) -> None:
        super().__init__("pybgpstream")
        self.calls: list[dict[str, Any]] = []

    def BGPStream(self, **kwargs: Any) -> SimpleNamespace:
        self.calls.append(kwargs)
        day = kwargs["from_time"][:10]
        from datetime import UTC, datetime

        t0 = int(datetime.strptime(day, "%Y-%m-%d").replace(tzinfo=UTC).timestamp())
        first = [
            FakeRecord(
                t0, [FakeElem("192.0.2.0/24", "3356 1299 64500 64500", 3356, "198.51.100.1")]
            ),
            FakeRecord(
                t0,
                [
                    FakeElem("2001:db8::/32", "6939 {64501,64502}", 6939, "2001:db8::1"),
                    FakeElem("192.0.2.0/24", "", 6939, "2001:db8::1", type="W"),
                    FakeElem("203.0.113.0/24", "6939 x 7", 6939, "2001:db8::1"),  # unreadable
                    FakeElem("not-a-prefix", "6939 7", 6939, "2001:db8::1"),  # unreadable
                ],
            ),
        ]
        later = [FakeRecord(t0 + 7200, [FakeElem("198.51.100.0/24", "1 2 3", 1, "198.51.100.9")])]
        return SimpleNamespace(records=lambda: iter(first + later))


def test_months_materialised_once(tmp_path: Path) -> None:
    fake = FakeBgpstream()
    refs = stream_snapshots(
        "bgpstream:routeviews/route-views2",
        since="2011-12",
        until="2012-01",
        day=5,
        cache=tmp_path,
        module=fake,
    )
    assert [c["from_time"] for c in fake.calls] == ["2011-12-05 00:00:00", "2012-01-05 00:00:00"]
    assert fake.calls[0]["until_time"] == "2011-12-05 23:59:59"
    assert (
        fake.calls[0]["collectors"] == ["route-views2"] and fake.calls[0]["record_type"] == "ribs"
    )
    assert [(r.month, r.collector) for r in refs] == [
        ("2011-12", "route-views2"),
        ("2012-01", "route-views2"),
    ]
    assert (
        Path(refs[0].path) == tmp_path / "routeviews/route-views2/2011-12/rib.20111205.0000.mrt.gz"
    )
    entries = [e.data for e in Reader(refs[0].path)]
    peers = [int(p["peer_as"]) for p in entries[0]["peer_entries"]]
    assert peers == [3356, 6939]
    ribs = [(e["prefix"], e["rib_entries"][0]["peer_index"]) for e in entries[1:]]
    assert ribs == [
        ("192.0.2.0", 0),
        ("2001:db8::", 1),
    ]  # the later dump and the withdrawal left out
    again = stream_snapshots(
        "bgpstream:routeviews/route-views2",
        since="2011-12",
        until="2012-01",
        day=5,
        cache=tmp_path,
        module=fake,
    )
    assert again == refs and len(fake.calls) == 2  # nothing fetched twice
