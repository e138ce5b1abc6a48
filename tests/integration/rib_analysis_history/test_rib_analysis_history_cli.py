"""`rib-analysis history` as an operator runs it: the installed console script, exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from rib_analysis.history.synth import random_series, write_series

SCRIPT = Path(sys.executable).parent / "rib-analysis"


def cli(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(SCRIPT), *argv], capture_output=True, text=True, timeout=240, check=False
    )


@pytest.fixture(scope="module")
def wired() -> None:
    if cli("history", "--help").returncode != 0:
        pytest.skip("rib-analysis has no history subcommand yet")


def test_history_help(wired: None) -> None:
    proc = cli("history", "--help")
    assert proc.returncode == 0
    for option in ("--scheduler", "--db", "--since", "--collector", "bgpstream:"):
        assert option in proc.stdout


def test_history_run_then_cached(wired: None, tmp_path: Path) -> None:
    write_series(tmp_path / "rv", random_series(3, providers=10, stubs=60, seed=5))
    out = tmp_path / "out"
    first = cli(
        "--log-format",
        "json",
        "history",
        str(tmp_path / "rv"),
        "-o",
        str(out),
        "--scheduler",
        "serial",
    )
    assert first.returncode == 0, first.stderr
    assert "3 snapshots (3 decoded, 0 cached)" in first.stdout
    again = cli("history", str(tmp_path / "rv"), "-o", str(out), "--scheduler", "serial")
    assert again.returncode == 0 and "(0 decoded, 3 cached)" in again.stdout
    data = json.loads((out / "report.json").read_text())
    assert data["months"] == ["2011-01", "2011-02", "2011-03"]
    assert {p.name for p in (out / "parquet").iterdir()} == {
        "as_table.parquet",
        "snapshots.parquet",
        "stub_changes.parquet",
    }


def test_history_exit_codes(wired: None, tmp_path: Path) -> None:
    missing = cli("history", str(tmp_path / "nope"), "-o", str(tmp_path / "o"))
    assert missing.returncode == 64 and "no such file" in missing.stderr
    stream = cli(
        "history",
        "bgpstream:routeviews/route-views2",
        "--since",
        "2011-01",
        "--until",
        "2011-01",
        "-o",
        str(tmp_path / "o"),
    )
    try:
        import pybgpstream  # noqa: F401
    except ImportError:
        assert stream.returncode == 69
        assert "pip install 'mast-toolkit[bgpstream]'" in stream.stderr
    bad_month = cli("history", str(tmp_path), "-o", str(tmp_path / "o"), "--since", "2011-13")
    assert bad_month.returncode == 2 and "not YYYY-MM" in bad_month.stderr  # argparse usage error
    assert "Traceback" not in missing.stderr + stream.stderr + bad_month.stderr
