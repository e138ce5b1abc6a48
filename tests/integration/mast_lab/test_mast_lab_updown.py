"""`mast-lab up` leaves a running lab behind a supervisor; `status` sees it; `down` removes every
namespace and process — also after the supervisor (or a failover run) was killed mid-flight."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from mast_common.netns import list_namespaces
from mast_lab.state import pid_alive, read_state

pytestmark = pytest.mark.integration


def mast_lab(*args: str, run_root: Path, timeout: float = 240) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mast_lab.cli", "--run-root", str(run_root), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def leftovers(state_file: Path) -> tuple[list[str], list[int]]:
    raw = json.loads(state_file.read_text())
    tag = raw["tag"]
    namespaces = [ns for ns in list_namespaces() if ns.startswith(tag + "-")]
    pids = [p["pid"] for p in raw["processes"] if pid_alive(p["pid"])]
    return namespaces, pids


def test_up_status_down_and_down_after_abort(require_root: None, tmp_path: Path) -> None:
    run_root = tmp_path / "run"
    try:
        check_up_status_down(run_root, tmp_path)
    finally:
        mast_lab("down", run_root=run_root)  # whatever failed above, leave nothing running


def check_up_status_down(run_root: Path, tmp_path: Path) -> None:
    up = mast_lab("up", run_root=run_root)
    assert up.returncode == 0, up.stdout + up.stderr
    rundir = run_root / "mast-failover"
    state = read_state(rundir)
    assert state is not None and state.status == "up"
    assert len(state.namespaces) == 12 and state.processes
    saved = tmp_path / "state.json"
    saved.write_text((rundir / "state.json").read_text())
    status = mast_lab("status", run_root=run_root)
    assert status.returncode == 0, status.stdout + status.stderr
    assert "Established" in status.stdout

    # Abort: the supervisor dies without cleaning up (SIGKILL); namespaces and daemons remain.
    os.kill(state.owner_pid, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while pid_alive(state.owner_pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    namespaces, pids = leftovers(saved)
    assert namespaces and pids
    assert mast_lab("status", run_root=run_root).returncode != 0

    down = mast_lab("down", run_root=run_root)
    assert down.returncode == 0, down.stdout + down.stderr
    assert leftovers(saved) == ([], [])
    assert not (rundir / "state.json").exists()
    assert "not up" in mast_lab("down", run_root=run_root).stdout


def test_down_after_killed_failover(require_root: None, tmp_path: Path) -> None:
    run_root = tmp_path / "run"
    proc = subprocess.Popen(
        [sys.executable, "-m", "mast_lab.cli", "--run-root", str(run_root), "failover",
         "--output", str(tmp_path / "out")],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    state_file = run_root / "mast-failover" / "state.json"
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            state = read_state(state_file.parent)
            if state is not None and state.status == "up":
                break
            time.sleep(0.2)
        else:
            pytest.fail("failover never brought the lab up")
        time.sleep(2)  # probes started in some nodes
    finally:
        proc.kill()
        proc.wait(timeout=10)
    try:
        saved = tmp_path / "state.json"
        saved.write_text(state_file.read_text())
        namespaces, pids = leftovers(saved)
        assert namespaces and pids
        down = mast_lab("down", run_root=run_root)
        assert down.returncode == 0, down.stdout + down.stderr
        assert leftovers(saved) == ([], [])
    finally:
        mast_lab("down", run_root=run_root)
