"""`rib-analysis report` writes an HTML report that headless Chromium renders with its plots."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
from mast_common.browser import chromium_path, screenshot
from rib_analysis.cli import main

WRITER = Path(__file__).resolve().parents[2] / "unit" / "rib_analysis" / "mrt_writer.py"


def _known_rib(tmp_path: Path) -> Path:
    spec = importlib.util.spec_from_file_location("rib_mrt_writer", WRITER)
    assert spec and spec.loader
    w = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(w)
    rib = tmp_path / "known.mrt"
    rib.write_bytes(w.known_rib())
    return rib


def _rib(shared_data_dir: Path, tmp_path: Path) -> Path:
    jinx = shared_data_dir / "ribs" / "rv-route-views.jinx-rib.1401487200.bz2"
    return jinx if jinx.exists() else _known_rib(tmp_path)


def test_report_renders_in_headless_chromium(tmp_path: Path) -> None:
    if chromium_path() is None:
        pytest.skip("chromium is not installed")
    shared = Path(__file__).resolve().parents[3].parent / "shared" / "data"
    rib = _rib(shared, tmp_path)
    out = tmp_path / "report"
    assert main(["--log-level", "error", "report", str(rib), "-o", str(out)]) == 0
    page = out / "report.html"
    text = page.read_text()
    assert text.count("<svg") == 3  # Table 6.1 bars, Fig 6.4 curves, homing histogram
    for plot in ("plot-stubs", "plot-providers", "plot-homing"):
        assert f'id="{plot}"' in text
    doc = json.loads((out / "report.json").read_text())
    assert doc["providers_all"] and doc["entries"] > 0
    assert "Table 6.1" in (out / "report.md").read_text()

    shot = screenshot(page, tmp_path / "shot.png", width=1200, height=2000)
    png = shot.read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    # A blank page compresses to a few KB; three plots and tables do not.
    assert len(png) > 40_000, len(png)
    from matplotlib.image import imread

    pixels = imread(str(shot))
    assert pixels.shape[0] >= 1000 and pixels.shape[1] >= 1000
    inked = (pixels[:, :, :3].min(axis=2) < 0.9).mean()  # not (near-)white
    colored = (pixels[:, :, :3].max(axis=2) - pixels[:, :, :3].min(axis=2) > 0.3).mean()
    assert inked > 0.02, inked  # text, tables, axes
    assert colored > 0.001, colored  # the plots' coloured bars and curves
