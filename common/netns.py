"""Network namespaces joined by veth, with processes run inside and always torn down.

A `Lab` owns a set of namespaces whose names carry the owner's PID
(`mt<pid>x<n>-<node>`), so a later run can sweep what a killed run left behind. Closing a lab
(explicitly, through `with`, or through the pytest fixture) kills every process it started and
every process still inside its namespaces, then deletes the namespaces — also when the test that
used it failed.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType

from mast_common.waiting import wait_for

NETNS_DIR = Path("/run/netns")
_NAME_RE = re.compile(r"^mt(\d+)x\d+-")
_lab_counter = itertools.count(1)


class NetnsError(RuntimeError):
    """A namespace operation failed; the message carries the command and its stderr."""


def run_host(
    args: Sequence[str], *, timeout: float = 30, check: bool = True, input: str | None = None
) -> subprocess.CompletedProcess[str]:
    """Run a command in the caller's namespace with a timeout; raise NetnsError on failure."""
    try:
        proc = subprocess.run(
            list(args), capture_output=True, text=True, timeout=timeout, input=input
        )
    except subprocess.TimeoutExpired:
        raise NetnsError(f"timed out after {timeout} s: {' '.join(args)}") from None
    except FileNotFoundError:
        raise NetnsError(f"command not found: {args[0]}") from None
    if check and proc.returncode != 0:
        raise NetnsError(
            f"exit {proc.returncode}: {' '.join(args)}: {(proc.stderr or proc.stdout).strip()}"
        )
    return proc


def list_namespaces() -> list[str]:
    out = run_host(["ip", "netns", "list"]).stdout
    return [line.split()[0] for line in out.splitlines() if line.strip()]


def namespace_pids(name: str) -> list[int]:
    proc = run_host(["ip", "netns", "pids", name], check=False)
    return [int(p) for p in proc.stdout.split() if p.isdigit()]


def pid_alive(pid: int) -> bool:
    """True while `pid` runs; a zombie counts as gone (it has exited, its parent just has not reaped it)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[-1].split()[0] != "Z"


def destroy_namespace(name: str) -> None:
    """Kill everything inside `name`, then delete it. Safe to call on a missing namespace."""
    for attempt in range(3):
        pids = namespace_pids(name)
        if not pids:
            break
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL if attempt else signal.SIGTERM)
        deadline = time.monotonic() + 3
        while time.monotonic() < deadline and any(pid_alive(p) for p in pids):
            time.sleep(0.05)
    run_host(["ip", "netns", "del", name], check=False)


def sweep_stale() -> list[str]:
    """Delete namespaces left by labs whose owning process is gone; return their names."""
    removed = []
    for name in list_namespaces():
        m = _NAME_RE.match(name)
        if m and not pid_alive(int(m.group(1))):
            destroy_namespace(name)
            removed.append(name)
    return removed


@dataclass
class Process:
    """A process started inside a namespace by a Lab."""

    node: str
    args: list[str]
    popen: subprocess.Popen[bytes]
    log_path: Path

    @property
    def pid(self) -> int:
        return self.popen.pid

    def alive(self) -> bool:
        return self.popen.poll() is None

    def log(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except OSError:
            return ""

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 5) -> int | None:
        """Signal the process group, escalate to SIGKILL after `timeout`; return the exit code."""
        if self.popen.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.popen.pid, sig)
            try:
                self.popen.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.popen.pid, signal.SIGKILL)
                self.popen.wait(timeout=5)
        return self.popen.returncode


@dataclass
class Node:
    """One namespace: a host or a router."""

    lab: Lab
    name: str
    netns: str
    processes: list[Process] = field(default_factory=list)

    def exec(
        self,
        args: Sequence[str],
        *,
        timeout: float = 30,
        check: bool = True,
        input: str | None = None,
    ) -> subprocess.CompletedProcess[str]:
        """Run a command inside this namespace and wait for it."""
        return run_host(
            ["ip", "netns", "exec", self.netns, *args], timeout=timeout, check=check, input=input
        )

    def ip(self, *args: str) -> str:
        return self.exec(["ip", *args]).stdout

    def spawn(
        self,
        args: Sequence[str],
        *,
        label: str | None = None,
        env: Mapping[str, str] | None = None,
        cwd: str | Path | None = None,
    ) -> Process:
        """Start a long-running process inside this namespace; its output goes to a log file."""
        label = label or Path(args[0]).name
        log_path = self.lab.workdir / f"{self.name}.{label}.{len(self.processes)}.log"
        full_env = dict(os.environ)
        full_env.update(env or {})
        with open(log_path, "wb") as log:
            popen = subprocess.Popen(
                ["ip", "netns", "exec", self.netns, *args],
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
                env=full_env,
                cwd=cwd,
            )
        proc = Process(self.name, list(args), popen, log_path)
        self.processes.append(proc)
        return proc

    def add_address(self, ifname: str, cidr: str) -> None:
        extra = ["nodad"] if ":" in cidr else []
        self.ip("addr", "add", cidr, "dev", ifname, *extra)

    def set_link(self, ifname: str, up: bool) -> None:
        self.ip("link", "set", ifname, "up" if up else "down")

    def addresses(self, ifname: str | None = None) -> str:
        args = ["-6", "addr", "show"] + (["dev", ifname] if ifname else [])
        return self.ip(*args)

    def pids(self) -> list[int]:
        return namespace_pids(self.netns)


class Lab:
    """A set of namespaces (nodes) joined by veth links, owned by this process."""

    def __init__(self, workdir: str | Path | None = None, *, keep_workdir: bool = False) -> None:
        if os.geteuid() != 0:
            raise NetnsError("network namespaces need root")
        if shutil.which("ip") is None:
            raise NetnsError("iproute2 ('ip') is not installed")
        self.tag = f"mt{os.getpid()}x{next(_lab_counter)}"
        self._own_workdir = workdir is None
        self.workdir = Path(workdir or tempfile.mkdtemp(prefix=f"{self.tag}-"))
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.keep_workdir = keep_workdir
        self.nodes: dict[str, Node] = {}
        self.closed = False

    def node(self, name: str) -> Node:
        """Create (or return) the namespace for node `name`, with loopback up."""
        if name in self.nodes:
            return self.nodes[name]
        if not re.fullmatch(r"[a-z0-9][a-z0-9_.-]{0,30}", name):
            raise NetnsError(f"bad node name {name!r}: use [a-z0-9_.-], 1-31 characters")
        netns = f"{self.tag}-{name}"
        run_host(["ip", "netns", "add", netns])
        node = Node(self, name, netns)
        self.nodes[name] = node
        node.ip("link", "set", "lo", "up")
        # Tests assert on addresses immediately: no duplicate address detection delays.
        node.exec(["sysctl", "-qw", "net.ipv6.conf.all.accept_dad=0"])
        node.exec(["sysctl", "-qw", "net.ipv6.conf.default.accept_dad=0"])
        return node

    def link(self, a: str, a_if: str, b: str, b_if: str, *, up: bool = True) -> None:
        """Join nodes `a` and `b` with a veth pair (interface names at most 15 characters)."""
        for ifname in (a_if, b_if):
            if len(ifname) > 15:
                raise NetnsError(f"interface name {ifname!r} longer than 15 characters")
        na, nb = self.node(a), self.node(b)
        run_host(
            [
                "ip",
                "link",
                "add",
                a_if,
                "netns",
                na.netns,
                "type",
                "veth",
                "peer",
                "name",
                b_if,
                "netns",
                nb.netns,
            ]
        )
        if up:
            na.set_link(a_if, True)
            nb.set_link(b_if, True)

    def namespaces(self) -> list[str]:
        return [n.netns for n in self.nodes.values()]

    def close(self) -> None:
        """Stop every process and delete every namespace; never raises for what is already gone."""
        if self.closed:
            return
        self.closed = True
        for node in self.nodes.values():
            for proc in reversed(node.processes):
                proc.stop(timeout=3)
        for node in self.nodes.values():
            destroy_namespace(node.netns)
        wait_for(
            lambda: not (set(self.namespaces()) & set(list_namespaces())),
            timeout=10,
            what="lab namespaces to disappear",
        )
        if self._own_workdir and not self.keep_workdir:
            shutil.rmtree(self.workdir, ignore_errors=True)

    def __enter__(self) -> Lab:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
