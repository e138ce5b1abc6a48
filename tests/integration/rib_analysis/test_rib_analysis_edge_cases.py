"""Every edge-case file of ../shared/data: a result or a clear error, never a crash."""

from __future__ import annotations

from pathlib import Path

import pytest
from rib_analysis.analysis import analyse
from rib_analysis.ingest import MrtDataError

pytestmark = pytest.mark.realdata


def _files(shared_data: Path) -> list[Path]:
    dirs = [
        shared_data / "edge-cases",
        shared_data / "edge-cases" / "mrtparse-samples",
        shared_data / "updates",
    ]
    return sorted(p for d in dirs if d.is_dir() for p in d.iterdir() if p.is_file())


def test_edge_cases_never_crash(shared_data: Path) -> None:
    files = _files(shared_data)
    if not files:
        pytest.skip("no edge-case files")
    for path in files:
        for skip_bad in (False, True):
            try:
                doc = analyse([path], skip_bad=skip_bad).as_json()
            except MrtDataError as e:
                assert not skip_bad, f"{path}: --skip-bad must not fail: {e}"
                assert str(path) in str(e) and "byte offset" in str(e)
                continue
            f = doc["input"]["files"][0]
            assert f["entries"] >= 0 and f["records"] >= 0


def test_edge_case_answers(shared_data: Path) -> None:
    e = shared_data / "edge-cases"
    if not e.is_dir():
        pytest.skip("no edge-cases")
    # a record over 64 KB decodes whole
    big = analyse([e / "bgpdump-td-bview.64k_stream_overflow.gz"]).as_json()
    assert big["entries"] == 23 and big["input"]["files"][0]["bad_records"] == 0
    # RFC 8050 ADD-PATH RIB subtypes (their paths use private ASNs only, which METHOD.md drops)
    for name in (
        "bgpdump-td-bview.ipv4_unicast_add_path.gz",
        "bgpdump-td-bview.ipv6_unicast_add_path.gz",
    ):
        doc = analyse([e / name]).as_json()
        assert doc["entries"] == 62 and doc["entries_without_path"] == 62
    # RIS 2000: record lengths disagree with their contents: a clear error at offset 0
    with pytest.raises(
        MrtDataError, match=r"ris-rrc00-bview.20000111.0032.gz: bad MRT record at byte offset 0"
    ):
        analyse([e / "ris-rrc00-bview.20000111.0032.gz"])
    skipped = analyse([e / "ris-rrc00-bview.20000111.0032.gz"], skip_bad=True).as_json()
    assert skipped["input"]["files"][0]["bad_records"] >= 1
