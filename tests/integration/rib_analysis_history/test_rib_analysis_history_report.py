"""The history report opens in headless Chromium (screenshot taken; the four plots are there)."""

from __future__ import annotations

import base64
import re
import struct
from pathlib import Path

import pytest
from mast_common.browser import chromium_path, screenshot
from rib_analysis.history import command
from rib_analysis.history.synth import random_series, write_series

PNG = b"\x89PNG\r\n\x1a\n"


def png_size(data: bytes) -> tuple[int, int]:
    assert data.startswith(PNG), "not a PNG"
    width, height = struct.unpack("!II", data[16:24])
    return width, height


def test_report_in_headless_chromium(tmp_path: Path) -> None:
    if chromium_path() is None:
        pytest.skip("chromium is not installed")
    write_series(
        tmp_path / "rv", random_series(4, providers=20, stubs=200, change_rate=0.05, seed=3)
    )
    out = tmp_path / "out"
    assert command.main([str(tmp_path / "rv"), "-o", str(out), "--scheduler", "serial"]) == 0
    html = (out / "report.html").read_text()
    plots = dict(
        re.findall(r"id='plot-(\w+)' alt='\w+' src='data:image/png;base64,([A-Za-z0-9+/=]+)'", html)
    )
    assert sorted(plots) == ["by_block", "changes", "growth", "max_stubs"]
    for name, data in plots.items():
        w, h = png_size(base64.b64decode(data))
        assert w > 300 and h > 150, name
    shot = screenshot(out / "report.html", tmp_path / "shot.png", width=1200, height=2000)
    assert png_size(shot.read_bytes()) == (1200, 2000)
    # A page with four plots compresses far worse than a blank one.
    assert shot.stat().st_size > 50_000
