"""scripts/install-deps is idempotent: a second run installs nothing and prints nothing."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]


@pytest.mark.skipif(os.geteuid() != 0, reason="install-deps runs as root")
def test_install_deps_is_quiet_when_everything_is_present() -> None:
    proc = subprocess.run(
        [str(REPO / "scripts" / "install-deps")],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=REPO,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "" and proc.stderr == ""
