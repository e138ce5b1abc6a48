"""Known answers on a small MRT file built here: every classification rule of METHOD.md."""

from __future__ import annotations

import bz2
import gzip
import importlib.util
import json
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from rib_analysis.analysis import analyse
from rib_analysis.classify import AS_FIRST_HOP as FIRST_HOP
from rib_analysis.classify import AS_MIDDLE as MIDDLE
from rib_analysis.classify import AS_ORIGIN as ORIGIN
from rib_analysis.classify import FirstHop
from rib_analysis.cli import main
from rib_analysis.ingest import ingest


def _writer() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "rib_mrt_writer", Path(__file__).with_name("mrt_writer.py")
    )
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


W = _writer()


@pytest.fixture(params=["plain", "gz", "bz2"])
def known_file(tmp_path: Path, request: pytest.FixtureRequest) -> Path:
    data = W.known_rib()
    path = tmp_path / f"known.{request.param}"
    path.write_bytes(
        {"plain": data, "gz": gzip.compress(data), "bz2": bz2.compress(data)}[request.param]
    )
    return path


def test_known_answer_default_rules(known_file: Path) -> None:
    doc = analyse([known_file]).as_json()
    assert doc["entries"] == W.KNOWN_ENTRIES
    assert doc["prefixes"] == {"total": 13, "ipv4": 11, "ipv6": 2, "without_origin": 0}
    # 1005 (inside an AS_SET) and 64512 (private) are not counted
    assert doc["ases"] == {"total": 11, "stubs": 5, "providers": 6, "providers_first_hop_only": 2}
    assert doc["stubs_table"] == {
        "single": {"pi": 1, "pa": 2, "both": 0, "total": 3},  # S2 PI; S1, S6 (IPv6) PA
        "multi": {"pi": 0, "pa": 1, "both": 1, "total": 2},  # S4 (AS4_PATH) PA; S3 both
        "no_upstream": 0,
    }
    assert doc["homing_degree"] == {"1": 3, "2": 1, "3": 1}
    # provider aggregates: 10/8, 20/8, 50/16 (AS_SET), 60/16 (private origin), 70/16,
    # 2001:db8::/32; 10.3/16 is provider-originated but inside A's own 10/8
    assert doc["grt"]["today"] == 13
    assert doc["grt"]["mast"] == doc["grt"]["mast_rib"] == 6
    assert doc["grt"]["mast_rib_prefixes"] == 7
    assert doc["grt"]["reduction"] == round(1 - 6 / 13, 6)
    p = doc["providers"]
    assert (p["count"], p["lima_table"], p["max_stubs"], p["max_stubs_asn"]) == (6, 6, 4, W.A)
    assert p["top"][0] == {
        "asn": W.A,
        "stubs": 4,
        "single": 2,
        "multi": 2,
        "degree_sum": 5,
        "lower": 12,
        "upper": 13,
    }
    assert [x["asn"] for x in p["top"]] == [W.A, W.B, W.T1]
    assert p["table_bounds"] == {"grt": 6, "max_lower": 12, "max_upper": 13}
    f = doc["input"]["files"][0]
    assert f["skipped_records"] == 2 and f["bad_records"] == 0 and f["truncated"] is None
    assert f["peers"] == 3


def test_per_as_rows(known_file: Path) -> None:
    run = ingest([known_file])
    run.rib.finish(True)
    rows = {r[0]: r for r in run.rib.as_rows()}
    _asn, _flags, provider, n_pi, n_pa, ups, block_v4, block_v6 = rows[W.S3]
    assert (provider, n_pi, n_pa, sorted(ups)) == (0, 1, 1, sorted([W.A, W.B, W.T1]))
    assert (block_v4, block_v6) == (16, None)
    # Shortest originated prefix length per family, None when the AS originates none in it.
    assert {asn: row[6:] for asn, row in rows.items()} == {
        W.A: (8, 32),  # 10/8, 10.3/16, 50/16 (AS_SET dropped), 2001:db8::/32
        W.B: (8, None),  # 20/8, 60/16 (private origin dropped)
        W.S1: (16, None),
        W.S2: (16, None),
        W.S3: (16, None),  # 10.2/16 and 40/16
        W.S4: (16, None),  # 20.5/16, also through the legacy TABLE_DUMP
        W.S6: (None, 48),
        W.Q: (16, None),  # 70/16 on a path of length one
        W.C: (None, None),
        W.T1: (None, None),
        W.T2: (None, None),
    }
    assert (
        rows[W.C][1] == FIRST_HOP and rows[W.T1][1] & MIDDLE and rows[W.Q][1] == FIRST_HOP | ORIGIN
    )


def test_block_lengths_take_the_shortest_per_family(tmp_path: Path) -> None:
    # Longer prefixes before shorter ones, both families, and the extreme lengths /0, /32, /128.
    recs = [
        ("192.0.2.0/24", [W.C, W.T1, 7001]),
        ("192.0.0.0/22", [W.C, W.T1, 7001]),
        ("198.51.100.0/24", [W.C, W.T1, 7001]),
        ("2001:db8:700::/48", [W.C, W.T1, 7001]),
        ("2001:db8:700::/40", [W.C, W.T1, 7001]),
        ("0.0.0.0/0", [W.C, W.T1, 7002]),
        ("203.0.113.7/32", [W.C, W.T1, 7002]),
        ("2001:db8:ff::1/128", [W.C, W.T1, 7003]),
    ]
    data = W.peer_index_table([("192.0.2.1", W.C), ("2001:db8:ffff::1", W.C)])
    for seq, (prefix, path) in enumerate(recs):
        data += W.rib_v2(seq, prefix, [(1 if ":" in prefix else 0, W.attrs(path))])
    rib = tmp_path / "blocks.mrt"
    rib.write_bytes(data)
    run = ingest([rib])
    run.rib.finish(True)
    blocks = {r[0]: r[6:] for r in run.rib.as_rows()}
    assert blocks == {
        7001: (22, 40),
        7002: (0, None),
        7003: (None, 128),
        W.C: (None, None),
        W.T1: (None, None),
    }


def test_first_hop_origin_only(known_file: Path) -> None:
    doc = analyse([known_file], first_hop=FirstHop.ORIGIN_ONLY).as_json()
    # Q originates 70/16 and otherwise appears only as a collector peer: now a stub
    assert doc["ases"] == {"total": 11, "stubs": 6, "providers": 5, "providers_first_hop_only": 1}
    assert doc["stubs_table"]["no_upstream"] == 1
    assert doc["grt"]["mast"] == 5


def test_ownership_file(tmp_path: Path) -> None:
    rib = tmp_path / "known.mrt"
    rib.write_bytes(W.known_rib())
    own = tmp_path / "ipasn.dat.gz"
    own.write_bytes(
        gzip.compress(
            b"; comment\n10.0.0.0/8\t100\n10.5.0.0/16\t100\n10.1.0.0/16\t1001\n"
            b"30.0.0.0/16\t200\n2001:db8::/32\t100\n"
        )
    )
    doc = analyse([rib], ownership=own).as_json()
    assert doc["grt"]["mast_source"] == "ownership"
    assert doc["grt"]["mast_ownership"] == 3  # 10.5/16 is inside its owner's 10/8
    assert doc["grt"]["mast_ownership_prefixes"] == 4
    assert doc["grt"]["mast"] == 3 and doc["grt"]["mast_rib"] == 6


def test_two_files_are_one_table(tmp_path: Path) -> None:
    data = W.known_rib()
    a, b = tmp_path / "a.mrt", tmp_path / "b.mrt"
    a.write_bytes(data)
    b.write_bytes(data)
    doc = analyse([a, b]).as_json()
    assert doc["entries"] == 2 * W.KNOWN_ENTRIES
    assert doc["ases"]["total"] == 11 and doc["grt"]["today"] == 13


def _cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, Any, str]:
    rc = main(["--log-level", "error", *argv])
    out, err = capsys.readouterr()
    return rc, out, err


def test_cli_json_and_table(known_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, err = _cli(["classify", str(known_file), "--format", "json"], capsys)
    assert rc == 0, err
    doc = json.loads(out)
    for key in ("entries", "ases", "stubs_table", "grt", "providers"):
        assert key in doc
    assert doc["schema"] == "rib-analysis/classify/1"
    assert "\r" not in err  # no progress bar when stderr is not a terminal
    rc, out, _ = _cli(["classify", str(known_file)], capsys)
    assert rc == 0 and "GRT under MAST" in out and "multi-homed" in out


def test_truncated_file_warns_and_strict_fails(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = W.known_rib()
    cut = tmp_path / "cut.mrt"
    cut.write_bytes(data[: len(data) - 30])
    rc, out, err = _cli(["classify", str(cut), "--format", "json"], capsys)
    assert rc == 0
    doc = json.loads(out)
    trunc = doc["input"]["files"][0]["truncated"]
    assert trunc is not None and trunc["mrt_offset"] > 0
    assert str(cut) in err and "truncated at byte offset" in err
    rc, _, err = _cli(["classify", str(cut), "--strict"], capsys)
    assert rc == 65 and str(cut) in err and "byte offset" in err


def test_truncated_bz2_stream(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = bz2.compress(W.known_rib() * 200)
    cut = tmp_path / "cut.bz2"
    cut.write_bytes(data[: len(data) // 2])
    rc, out, err = _cli(["classify", str(cut), "--format", "json"], capsys)
    assert rc == 0, err
    assert "bz2 stream ends without its end marker" in json.dumps(json.loads(out)["input"])


def test_bad_record_error_and_skip(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = W.rib_v2(1, "10.9.0.0/16", [(0, W.attrs([W.C, W.T1, W.A, 7777]))])
    bad = bytearray(W.rib_v2(2, "10.8.0.0/16", [(0, W.attrs([W.C, W.T1, W.A, 8888]))]))
    bad[12 + 4] = 40  # prefix length 40 for IPv4
    data = W.peer_index_table([("192.0.2.1", W.C)]) + good + bytes(bad) + good
    path = tmp_path / "bad.mrt"
    path.write_bytes(data)
    offset = len(W.peer_index_table([("192.0.2.1", W.C)])) + len(good)
    rc, _, err = _cli(["classify", str(path)], capsys)
    assert rc == 65
    assert str(path) in err and f"byte offset {offset}" in err and "prefix length 40" in err
    rc, out, err = _cli(["classify", str(path), "--skip-bad", "--format", "json"], capsys)
    assert rc == 0
    doc = json.loads(out)
    assert doc["entries"] == 2 and doc["input"]["files"][0]["bad_records"] == 1
    assert "skipped 1 bad records" in err


def test_bad_record_leaves_no_trace(tmp_path: Path) -> None:
    good = W.rib_v2(1, "10.9.0.0/16", [(0, W.attrs([W.C, W.T1, W.A, 7777]))])
    rec = W.rib_v2(2, "10.8.0.0/16", [(0, W.attrs([W.C, W.T1, W.A, 8888]))])
    # one stray byte after the entries: the prefix and the path parse, the record does not
    longer = rec[:8] + (int.from_bytes(rec[8:12], "big") + 1).to_bytes(4, "big") + rec[12:] + b"\0"
    path = tmp_path / "stray.mrt"
    path.write_bytes(W.peer_index_table([("192.0.2.1", W.C)]) + good + longer)
    doc = analyse([path], skip_bad=True).as_json()
    assert doc["input"]["files"][0]["bad_records"] == 1
    assert "1 bytes left after 1 RIB entries" in doc["input"]["files"][0]["first_bad"]["reason"]
    assert doc["prefixes"]["total"] == 1 and doc["entries"] == 1
    assert doc["ases"]["total"] == 4  # 8888 never counted


def test_damaged_header_resync(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    recs = [W.rib_v2(i, f"10.{i}.0.0/16", [(0, W.attrs([W.C, W.T1, 5000 + i]))]) for i in range(5)]
    data = (
        W.peer_index_table([("192.0.2.1", W.C)])
        + recs[0]
        + b"\xde\xad\xbe\xef"
        + b"".join(recs[1:])
    )
    path = tmp_path / "garbage.mrt"
    path.write_bytes(data)
    rc, _, err = _cli(["classify", str(path)], capsys)
    assert rc == 65 and "implausible MRT header" in err
    rc, out, _ = _cli(["classify", str(path), "--skip-bad", "--format", "json"], capsys)
    assert rc == 0
    doc = json.loads(out)
    assert doc["entries"] == 5 and doc["input"]["files"][0]["resyncs"] == 1


def test_damaged_gzip(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = bytearray(gzip.compress(W.known_rib() * 50))
    for i in range(40, 60):
        data[i] ^= 0x55
    path = tmp_path / "damaged.gz"
    path.write_bytes(bytes(data))
    rc, _, err = _cli(["classify", str(path)], capsys)
    assert rc == 65 and str(path) in err and "compressed byte offset" in err


def test_missing_and_empty_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc, _, err = _cli(["classify", str(tmp_path / "nope.bz2")], capsys)
    assert rc == 65 and "no such file" in err
    empty = tmp_path / "empty.mrt"
    empty.write_bytes(b"")
    rc, out, _ = _cli(["classify", str(empty), "--format", "json"], capsys)
    assert rc == 0 and json.loads(out)["entries"] == 0
    assert main([]) == 64
