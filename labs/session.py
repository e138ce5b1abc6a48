"""A lab owned by this process: realised, recorded on disk while it runs, always torn down."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from mast_common.netns import Lab, Node, Process
from mast_lab.parts import Parts
from mast_lab.realiser import RealisedLab, realise
from mast_lab.state import LabState, ProcessRecord, own_argv0, read_state
from mast_lab.topology import Topology


def record(state: LabState, real: RealisedLab, rundir: Path) -> None:
    state.namespaces = {name: node.netns for name, node in real.nodes.items()}
    state.processes = [
        ProcessRecord(node.name, Path(p.args[0]).name, p.pid, p.args[0])
        for node in real.nodes.values()
        for p in node.processes
    ]
    state.write(rundir)


def stop_together(processes: list[Process], timeout: float = 5) -> None:
    """SIGTERM every daemon at once and give them `timeout` together; SIGKILL the rest.
    (Lab.close stops them one by one, up to 3 s each: half a minute for this lab.)"""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for proc in processes:
            if proc.popen.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.popen.pid, sig)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and any(p.popen.poll() is None for p in processes):
            time.sleep(0.05)


@contextmanager
def owned_lab(topology: Topology, rundir: Path, parts: Parts) -> Iterator[RealisedLab]:
    """Bring the lab up in this process; `state.json` says so until it is down again."""
    # A fresh lab: daemon state of an earlier run (SRMS's database, Kea's leases and the hook's
    # prefix statuses) would start this one discouraged.
    if rundir.is_dir():
        for child in rundir.iterdir():
            if child.name not in ("state.json", "supervisor.log"):
                if child.is_dir():
                    shutil.rmtree(child, ignore_errors=True)
                else:
                    child.unlink(missing_ok=True)
    state = LabState(topology.name, str(topology.path), os.getpid(), own_argv0())
    state.write(rundir)
    lab = Lab(rundir / "logs", keep_workdir=True)
    state.tag = lab.tag
    state.write(rundir)
    try:
        real = realise(topology, lab, rundir, parts)
        state.status = "up"
        record(state, real, rundir)
        yield real
    except BaseException as exc:
        state.status = "failed"
        state.error = str(exc)
        state.write(rundir)
        raise
    finally:
        state.status = "stopping"
        state.write(rundir)
        stop_together([p for node in lab.nodes.values() for p in node.processes])
        lab.close()
        (rundir / "state.json").unlink(missing_ok=True)


def attached_nodes(rundir: Path) -> tuple[Lab, dict[str, Node]] | None:
    """Nodes of a lab another process owns (`mast-lab up`), for running probes inside them.

    The returned Lab only provides a work folder: closing it leaves the attached namespaces alone.
    """
    state = read_state(rundir)
    if state is None or state.status != "up":
        return None
    scratch = Lab(rundir / "attach" / str(int(time.time())), keep_workdir=True)
    return scratch, {n: Node(scratch, n, ns) for n, ns in state.namespaces.items()}
