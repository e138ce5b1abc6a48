"""`rib-analysis history` end to end with the real decoder and classifier: a series of MRT
snapshots built here with known stub provider changes, asserted exactly; the cache; real dumps."""

from __future__ import annotations

import argparse
import gzip
import json
import shutil
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from rib_analysis.history import classifier, command
from rib_analysis.history.astable import AsTable
from rib_analysis.history.synth import StubSpec, Topology, write_series

AGGREGATES = {1000: "20.0.0.0/16", 1001: "20.1.0.0/16", 1002: "20.2.0.0/16", 1003: "20.3.0.0/16"}
JAN = {
    200001: StubSpec((1000,), ("20.0.1.0/24",)),  # PA
    200002: StubSpec((1000, 1001), ("100.0.0.0/22",)),  # PI
    200003: StubSpec((1001,), ("100.1.0.0/24",)),
    200004: StubSpec((1002, 1003), ("100.2.0.0/20",)),
    200005: StubSpec((1000,), ("100.3.0.0/24", "20.0.5.0/24")),  # PI and PA
}
# February: 200001 gains 1001, 200002 loses 1000, 200004 swaps 1003 for 1000; 200006 is new.
FEB = {
    **JAN,
    200001: StubSpec((1000, 1001), ("20.0.1.0/24",)),
    200002: StubSpec((1001,), ("100.0.0.0/22",)),
    200004: StubSpec((1000, 1002), ("100.2.0.0/20",)),
    200006: StubSpec((1002,), ("100.4.0.0/24",)),
}
MAR = {k: v for k, v in FEB.items() if k != 200003}  # 200003 disappears
# No April dump; May: 200005 gains 1002 and 1003.
MAY = {**MAR, 200005: StubSpec((1000, 1002, 1003), ("100.3.0.0/24", "20.0.5.0/24"))}

EXPECTED_TOTALS = [
    # month, ASes, stubs, providers (4 + the 3 collector peers), single, multi, max stubs, provider
    ("2011-01", 12, 5, 7, 3, 2, 3, 1000),
    # AS1003 lost its only stub: it now only originates its aggregate, so it is a stub itself
    # (the seed's rule), multihomed to the three transit peers; back to provider in May.
    ("2011-02", 13, 7, 6, 4, 3, 3, 1000),
    ("2011-03", 12, 6, 6, 3, 3, 3, 1000),
    ("2011-05", 12, 5, 7, 2, 3, 3, 1000),
]
EXPECTED_CHANGES = [
    # month, since, months, stubs compared, additions, deletions, stubs changed
    ("2011-02", "2011-01", 1, 5, 2, 2, 3),
    ("2011-03", "2011-02", 1, 6, 0, 0, 0),  # AS1003 is compared too: a stub in both
    ("2011-05", "2011-03", 2, 5, 2, 0, 1),
]

# Fig 5.4 buckets: each stub compared between consecutive snapshots, by its largest IPv4 block at
# the earlier one. label, stub-intervals, stub-months, changes, mean changes per stub-month.
EXPECTED_BY_BLOCK = [
    ("/16", 1, 1, 0, 0.0),  # AS1003 (its aggregate) is a stub Feb -> Mar only
    ("/20", 3, 4, 2, 0.5),  # 200004: swaps 1003 for 1000 in Feb
    ("/22", 3, 4, 1, 0.25),  # 200002: loses 1000 in Feb
    # 200001, 200003, 200005 (Jan -> Feb), 200001, 200005, 200006 (Feb -> Mar, Mar -> May with a
    # two-month gap); 200001 gains 1001 in Feb, 200005 gains two in May
    ("/24", 9, 12, 3, 0.25),
]


def write_known_series(root: Path) -> list[Path]:
    paths = write_series(root, [Topology(AGGREGATES, s) for s in (JAN, FEB, MAR)], start="2011-01")
    paths += write_series(root, [Topology(AGGREGATES, MAY)], start="2011-05", suffix=".bz2")
    return paths


def args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    command.add_arguments(parser)
    return parser.parse_args(list(argv))


class Counting:
    """The real analyser, counting calls (serial mode runs it in this process)."""

    def __init__(self) -> None:
        self.paths: list[str] = []

    def __call__(self, path: str) -> AsTable:
        self.paths.append(path)
        return classifier.analyse_file(path)


def load(out: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((out / "report.json").read_text())
    return data


def rows(data: dict[str, Any]) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    totals = [
        (
            t["month"],
            t["ases"],
            t["stubs"],
            t["providers"],
            t["single_homed"],
            t["multihomed"],
            t["max_stubs_per_provider"],
            t["max_stubs_provider"],
        )
        for t in data["series"]["totals"]
    ]
    changes = [
        (
            c["month"],
            c["previous_month"],
            c["months"],
            c["stubs_compared"],
            c["additions"],
            c["deletions"],
            c["stubs_changed"],
        )
        for c in data["series"]["provider_changes"]
    ]
    return totals, changes


def by_block(data: dict[str, Any]) -> list[tuple[Any, ...]]:
    return [
        (b["label"], b["stubs"], b["stub_months"], b["changes"], b["mean_changes_per_month"])
        for b in data["series"]["changes_by_block"]
    ]


def test_known_series_exactly_then_from_the_cache(tmp_path: Path) -> None:
    archive = tmp_path / "route-views.test"
    paths = write_known_series(archive)
    out = tmp_path / "out"
    first = Counting()
    # Only three months at first: a later run over more months decodes only the new one.
    assert (
        command.history(args(*map(str, paths[:3]), "-o", str(out), "--scheduler", "serial"), first)
        == 0
    )
    assert len(first.paths) == 3

    more = Counting()
    assert command.history(args(str(archive), "-o", str(out), "--scheduler", "serial"), more) == 0
    assert [Path(p).name for p in more.paths] == ["rib.20110505.0000.mrt.bz2"]
    data = load(out)
    assert data["collector"] == "route-views.test"
    assert data["months"] == ["2011-01", "2011-02", "2011-03", "2011-05"]
    assert (data["run"]["decoded"], data["run"]["cached"]) == (1, 3)
    totals, changes = rows(data)
    assert totals == EXPECTED_TOTALS
    assert changes == EXPECTED_CHANGES
    assert by_block(data) == EXPECTED_BY_BLOCK

    again = Counting()
    assert command.history(args(str(archive), "-o", str(out), "--scheduler", "serial"), again) == 0
    assert again.paths == []  # nothing re-decoded
    data2 = load(out)
    assert (data2["run"]["decoded"], data2["run"]["cached"]) == (0, 4)
    assert data2["series"] == data["series"]

    # The AS table itself, through the Parquet export.
    table = pq.read_table(out / "parquet" / "as_table.parquet").to_pylist()
    jan = {r["asn"]: r for r in table if r["month"] == "2011-01"}
    assert {a for a, r in jan.items() if r["role"] == "stub"} == set(JAN)
    assert jan[200001]["addressing"] == "pa" and jan[200002]["addressing"] == "pi"
    assert jan[200005]["addressing"] == "both" and jan[200005]["prefixes"] == 2
    assert jan[200002]["upstreams"] == [1000, 1001] and jan[200002]["homing_degree"] == 2
    assert len(pq.read_table(out / "parquet" / "snapshots.parquet")) == 4
    changed = pq.read_table(out / "parquet" / "stub_changes.parquet").to_pylist()
    assert [(c["month"], c["asn"], c["added"], c["removed"]) for c in changed] == [
        ("2011-02", 200001, [1001], []),
        ("2011-02", 200002, [], [1000]),
        ("2011-02", 200004, [1000], [1003]),
        ("2011-05", 200005, [1002, 1003], []),
    ]
    md = (out / "report.md").read_text()
    assert "| 2011-02 | 2011-01 | 5 | 2 | 2 | 3 |" in md


def test_renamed_copy_is_not_decoded_again(tmp_path: Path) -> None:
    paths = write_known_series(tmp_path / "a")
    out = tmp_path / "out"
    assert (
        command.history(
            args(*map(str, paths[:2]), "-o", str(out), "--scheduler", "serial"), Counting()
        )
        == 0
    )
    copies = tmp_path / "b"
    copies.mkdir()
    for p in paths[:2]:
        shutil.copy(p, copies / p.name)
    second = Counting()
    assert command.history(args(str(copies), "-o", str(out), "--scheduler", "serial"), second) == 0
    assert second.paths == []


def test_bad_dumps_are_clear_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    paths = write_known_series(tmp_path / "rv")
    cut = paths[1]
    cut.write_bytes(cut.read_bytes()[:-40])  # the gzip stream ends early: a truncated dump
    out = str(tmp_path / "out")
    assert command.main([str(tmp_path / "rv"), "-o", out, "--scheduler", "serial"]) == 0
    assert command.main([str(cut), "-o", out, "--scheduler", "serial", "--strict"]) == 65
    err = capsys.readouterr().err
    assert f"{cut}: truncated" in err and "Traceback" not in err
    bad = tmp_path / "bad" / "rib.20110405.0000.mrt"
    bad.parent.mkdir()
    raw = bytearray(gzip.decompress(paths[0].read_bytes()))
    first_rib = 12 + int.from_bytes(raw[8:12], "big")  # after the PEER_INDEX_TABLE record
    raw[first_rib + 12 + 4] = 200  # an IPv4 prefix length of 200
    bad.write_bytes(bytes(raw))
    rc = command.main([str(bad), "-o", out, "--scheduler", "serial"])
    err = capsys.readouterr().err
    assert rc == 65, err
    assert str(bad) in err and "offset" in err and "Traceback" not in err


@pytest.mark.realdata
def test_real_dumps(shared_data: Path, tmp_path: Path) -> None:
    ribs = shared_data / "ribs"
    files = [
        ribs / "bgpdump-td-bview.20020722.2337.gz",
        ribs / "rv-route-views.jinx-rib.1401487200.bz2",
        ribs / "rv6-rib.20151101.0600_firstMB.bz2",
    ]
    if not all(f.exists() for f in files):
        pytest.skip("a real dump is missing")
    out = tmp_path / "out"
    assert command.history(args(*map(str, files), "-o", str(out), "--scheduler", "serial")) == 0
    data = load(out)
    assert data["months"] == ["2002-07", "2014-05", "2015-11"]
    # The per-AS table agrees with the snapshot classifier's own summary (its stable JSON keys).
    from rib_analysis.analysis import analyse

    for total, f in zip(data["series"]["totals"], files, strict=True):
        doc = analyse([f]).as_json()
        assert (total["ases"], total["stubs"], total["providers"]) == (
            doc["ases"]["total"],
            doc["ases"]["stubs"],
            doc["ases"]["providers"],
        )
        table = doc["stubs_table"]
        assert total["single_homed"] == sum(table["single"][k] for k in ("pi", "pa", "both"))
        assert total["multihomed"] == sum(table["multi"][k] for k in ("pi", "pa", "both"))
        assert total["max_stubs_per_provider"] == doc["providers"]["max_stubs"]
    jinx = data["series"]["totals"][1]
    assert 40_000 < jinx["ases"] < 60_000 and jinx["stubs"] > 0.8 * jinx["ases"]
    changes = data["series"]["provider_changes"]
    assert [c["months"] for c in changes] == [142, 18]
    assert all(c["stubs_compared"] > 0 for c in changes)
    # Fig 5.4 is filled from the classifier's per-AS block lengths: every compared stub
    # originates something, so the buckets account for all of them.
    blocks = data["series"]["changes_by_block"]
    assert blocks and any(b["label"] == "/24" for b in blocks)
    assert sum(b["stubs"] for b in blocks) == sum(c["stubs_compared"] for c in changes)
    assert all(b["stub_months"] >= b["stubs"] > 0 for b in blocks)
