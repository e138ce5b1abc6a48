"""The README's main job, end to end: `mast-lab failover` on the embedded lab (BIRD on five
routers, snmpd, Kea, Knot, VXLAN backup tunnel, probes in network namespaces) exits 0 and its
report holds the measured expectations; the HTML report renders in headless Chromium."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from mast_common.browser import chromium_path, screenshot

pytestmark = [pytest.mark.integration, pytest.mark.slow]
CHROMIUM = chromium_path()


def mast_lab(*args: str, run_root: Path, timeout: float = 240) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mast_lab.cli", "--run-root", str(run_root), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@pytest.fixture(scope="module")
def failover_run(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[subprocess.CompletedProcess[str], Path]:
    if os.geteuid() != 0:
        pytest.skip("network namespaces need root")
    for binary in ("bird", "snmpd", "kea-dhcp6", "knotd"):
        if shutil.which(binary) is None:
            pytest.fail(f"{binary} missing: run scripts/install-deps")
    base = tmp_path_factory.mktemp("failover")
    out = base / "out"
    try:
        proc = mast_lab("failover", "--output", str(out), run_root=base / "run")
        # The lab it brought up for the run must be gone.
        out.mkdir(parents=True, exist_ok=True)
        (out / "left-running").write_text(
            str((base / "run" / "mast-failover" / "state.json").exists())
        )
    finally:
        mast_lab("down", run_root=base / "run")  # only acts when the run was cut short
    return proc, out


def test_failover_passes_and_reports(
    failover_run: tuple[subprocess.CompletedProcess[str], Path],
) -> None:
    proc, out = failover_run
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "summary:" in proc.stdout and "timeline:" in proc.stdout
    data = json.loads((out / "failover.json").read_text())
    checks = {c["name"]: c for c in data["checks"]}
    assert checks["loss window"]["status"] == "pass"
    assert data["measurements"]["stream"]["loss_window_s"] <= 1.0
    assert checks["TCP survives"]["status"] == "pass"
    tcp = data["measurements"]["tcp"]
    assert tcp["sent"] == tcp["echoed"] > 0 and tcp["error"] is None
    assert checks["return to direct path"]["status"] == "pass"
    assert data["measurements"]["tunnel_in_use_after_cut_s"] is not None
    # Parts that are absent are reported as skipped, never silently passed.
    for name in ("hosts deprecate A-address", "DNS stops answering A-address"):
        assert checks[name]["status"] in ("pass", "skipped")
        if checks[name]["status"] == "skipped":
            assert "absent" in checks[name]["detail"]
            assert "NOT MEASURED" in proc.stdout
    assert data["encapsulation"]
    assert (out / "left-running").read_text() == "False"


@pytest.mark.skipif(CHROMIUM is None, reason="chromium not installed")
def test_html_report_renders_in_chromium(
    failover_run: tuple[subprocess.CompletedProcess[str], Path], tmp_path: Path
) -> None:
    import numpy as np
    from PIL import Image

    _, out = failover_run
    html = out / "failover.html"
    assert html.exists()
    shot = screenshot(html, tmp_path / "shot.png", width=1100, height=900)
    image = Image.open(shot).convert("RGB")
    assert image.size[0] >= 800
    # The plot is there: matplotlib's first series colour (#1f77b4) fills part of the page.
    rgb = np.asarray(image).astype(int)
    near = (
        (abs(rgb[..., 0] - 31) < 40) & (abs(rgb[..., 1] - 119) < 40) & (abs(rgb[..., 2] - 180) < 40)
    )
    blue = int(near.sum())
    assert blue > 500, f"only {blue} plot-coloured pixels in the screenshot"


def test_failover_with_itmp_provisioned_tunnel(require_root: None, tmp_path: Path) -> None:
    """The ITMP variant: one border router; the backup tunnel is negotiated and provisioned by
    ITMP (TMS on A and B, stub client on r, NETCONF router agents) instead of configured."""
    from mast_lab.parts import detect

    if not detect().itmp.present:
        pytest.skip("itmp is not installed")
    lab = Path(__file__).resolve().parents[3] / "labs" / "mast-failover-itmp.clab.yml"
    out = tmp_path / "out"
    try:
        proc = mast_lab("failover", str(lab), "--output", str(out), run_root=tmp_path / "run")
    finally:
        mast_lab("down", str(lab), run_root=tmp_path / "run")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    data = json.loads((out / "failover.json").read_text())
    assert "provisioned by ITMP" in data["encapsulation"]
    checks = {c["name"]: c["status"] for c in data["checks"]}
    assert checks["loss window"] == checks["TCP survives"] == "pass"
    assert checks["return to direct path"] == "pass"
