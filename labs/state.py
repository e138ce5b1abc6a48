"""What a running lab left on disk, so that `mast-lab down` can remove it from another process.

`<run root>/<lab>/state.json` names the process that owns the lab (the `up` supervisor or a
`failover` run), the namespace tag of its `Lab` (every namespace it made starts with it), and
every daemon it started. It is written before the first namespace exists and updated as the lab
grows, so an aborted run still leaves enough to clean up.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from mast_common.netns import destroy_namespace, list_namespaces, namespace_pids, pid_alive

RUN_ROOT = Path(os.environ.get("MAST_LAB_RUN", "/run/mast-lab"))


@dataclass
class ProcessRecord:
    node: str
    label: str
    pid: int
    argv0: str


@dataclass
class LabState:
    lab: str
    topology: str
    owner_pid: int
    owner_argv0: str = ""
    tag: str = ""
    status: str = "starting"  # starting | up | failed | stopping
    error: str = ""
    namespaces: dict[str, str] = field(default_factory=dict)
    processes: list[ProcessRecord] = field(default_factory=list)
    started_unix: float = field(default_factory=time.time)

    def write(self, rundir: Path) -> None:
        rundir.mkdir(parents=True, exist_ok=True)
        tmp = rundir / "state.json.tmp"
        tmp.write_text(json.dumps(asdict(self), indent=2))
        tmp.replace(rundir / "state.json")


def rundir_for(name: str, root: Path | None = None) -> Path:
    return (root or RUN_ROOT) / name


def read_state(rundir: Path) -> LabState | None:
    try:
        raw: dict[str, Any] = json.loads((rundir / "state.json").read_text())
    except (OSError, ValueError):
        return None
    procs = [ProcessRecord(**p) for p in raw.pop("processes", [])]
    return LabState(**raw, processes=procs)


def _cmdline(pid: int) -> list[str]:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return []
    return [a.decode(errors="replace") for a in raw.split(b"\0") if a]


def own_argv0() -> str:
    cmd = _cmdline(os.getpid())
    return cmd[0] if cmd else ""


def owner_alive(state: LabState) -> bool:
    cmd = _cmdline(state.owner_pid)
    return pid_alive(state.owner_pid) and bool(cmd) and cmd[0] == state.owner_argv0


def lab_namespaces(state: LabState) -> list[str]:
    """Namespaces of this lab that still exist: the recorded ones and any carrying its tag."""
    existing = set(list_namespaces())
    names = {ns for ns in state.namespaces.values() if ns in existing}
    if state.tag:
        names |= {ns for ns in existing if ns.startswith(state.tag + "-")}
    return sorted(names)


def live_processes(state: LabState) -> list[ProcessRecord]:
    """Recorded daemons still running (a reused PID running something else does not count)."""
    out = []
    for rec in state.processes:
        cmd = _cmdline(rec.pid)
        # A console script runs as `python /path/script`: its name is the first or second word.
        names = {Path(word).name for word in cmd[:2]}
        if pid_alive(rec.pid) and Path(rec.argv0).name in names:
            out.append(rec)
    return out


def _stop_all(pids: list[int], timeout: float = 3) -> None:
    """SIGTERM every process at once, SIGKILL what is left after `timeout`. Orphans of a killed
    owner become zombies until PID 1 reaps them, so the wait treats zombies as gone (one
    namespace at a time, waiting on zombies, took seconds per namespace)."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, sig)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and any(pid_alive(p) for p in pids):
            time.sleep(0.05)
        pids = [p for p in pids if pid_alive(p)]
        if not pids:
            return


def tear_down(rundir: Path, *, timeout: float = 30) -> list[str]:
    """Stop the lab's owner, then remove whatever is left; return what was done."""
    state = read_state(rundir)
    if state is None:
        return []
    removed = []
    if state.owner_pid != os.getpid() and owner_alive(state):
        os.kill(state.owner_pid, signal.SIGTERM)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and owner_alive(state):
            time.sleep(0.1)
        if owner_alive(state):
            with contextlib.suppress(ProcessLookupError):
                os.kill(state.owner_pid, signal.SIGKILL)
        removed.append(f"stopped owner process {state.owner_pid}")
    namespaces = lab_namespaces(state)
    _stop_all([pid for ns in namespaces for pid in namespace_pids(ns)])
    for ns in namespaces:
        destroy_namespace(ns)
        removed.append(f"removed namespace {ns}")
    for rec in live_processes(state):
        with contextlib.suppress(ProcessLookupError):
            os.kill(rec.pid, signal.SIGKILL)
        removed.append(f"killed {rec.label} {rec.pid} on {rec.node}")
    with contextlib.suppress(OSError):
        (rundir / "state.json").unlink()
    return removed
