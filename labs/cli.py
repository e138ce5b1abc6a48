"""mast-lab: realise a containerlab topology in network namespaces and run the failover on it.

  mast-lab up [LAB]        bring the lab up in the background (a supervisor process owns it)
  mast-lab status [LAB]    namespaces, daemons and BGP sessions of a lab that is up
  mast-lab failover [LAB]  run the failover scenario (on the lab that is up, or bring one up
                           for the run and tear it down after), print timeline and summary,
                           write JSON + HTML under --output
  mast-lab down [LAB]      stop the lab and remove every namespace and process it made, also
                           after an aborted run
LAB defaults to the embedded labs/mast-failover.clab.yml.

Exit codes: 0 ok; 1 an expectation failed (or, for status, the lab is incomplete);
69 namespaces/daemons unavailable (not root, a daemon would not start, lab not up);
70 interrupted; 78 bad topology or scenario file.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from mast_common.cli import (
    EXIT_CONFIG,
    EXIT_FAILURE,
    EXIT_OK,
    EXIT_SOFTWARE,
    EXIT_UNAVAILABLE,
    add_logging_args,
    apply_logging_args,
)
from mast_common.config import ConfigError
from mast_common.netns import NetnsError, list_namespaces
from mast_lab import parts as parts_mod
from mast_lab.state import (
    RUN_ROOT,
    live_processes,
    owner_alive,
    read_state,
    rundir_for,
    tear_down,
)
from mast_lab.topology import Topology, TopologyError, load_topology

DEFAULT_LAB = Path(__file__).resolve().parent / "mast-failover.clab.yml"
OUTPUT_ROOT = Path(os.environ.get("MAST_LAB_OUTPUT", "/var/tmp/mast-lab"))


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mast-lab",
        description="MAST failover lab: containerlab topology realised in network namespaces.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=__doc__,
    )
    parser.add_argument(
        "--run-root", type=Path, default=RUN_ROOT, help=f"lab state folder (default {RUN_ROOT})"
    )
    add_logging_args(parser)
    sub = parser.add_subparsers(dest="command", required=True, metavar="{up,down,status,failover}")
    for name, text in (
        ("up", "bring the lab up in the background"),
        ("down", "tear the lab down (also after an aborted run)"),
        ("status", "show what runs"),
        ("failover", "run the failover scenario and report"),
        ("_supervise", argparse.SUPPRESS),
    ):
        p = sub.add_parser(name, help=text) if text != argparse.SUPPRESS else sub.add_parser(name)
        p.add_argument(
            "lab", nargs="?", type=Path, default=DEFAULT_LAB, help="*.clab.yml (default: embedded)"
        )
        if name == "up":
            p.add_argument("--timeout", type=float, default=180, help="seconds to wait for it")
        if name == "failover":
            p.add_argument(
                "--output", type=Path, help=f"report folder (default {OUTPUT_ROOT}/<lab>)"
            )
            p.add_argument(
                "--strict",
                action="store_true",
                help="count measurements skipped because a part is absent as failures",
            )
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    apply_logging_args(args)
    if os.geteuid() != 0:
        print("mast-lab: network namespaces need root", file=sys.stderr)
        return EXIT_UNAVAILABLE
    try:
        topology = load_topology(args.lab)
    except TopologyError as exc:
        print(f"mast-lab: {exc}", file=sys.stderr)
        return EXIT_CONFIG
    rundir = rundir_for(topology.name, args.run_root)
    try:
        if args.command == "up":
            return cmd_up(topology, rundir, args.timeout)
        if args.command == "_supervise":
            return cmd_supervise(topology, rundir)
        if args.command == "down":
            return cmd_down(topology, rundir)
        if args.command == "status":
            return cmd_status(topology, rundir)
        # SIGTERM unwinds like Ctrl-C, so a lab this run brought up is torn down on the way out.
        signal.signal(signal.SIGTERM, _interrupt)
        return cmd_failover(topology, rundir, args.output, args.strict)
    except KeyboardInterrupt:
        print("mast-lab: interrupted; the lab this run brought up is torn down", file=sys.stderr)
        return EXIT_SOFTWARE
    except (ConfigError, TopologyError) as exc:
        print(f"mast-lab: {exc}", file=sys.stderr)
        return EXIT_CONFIG
    except NetnsError as exc:
        print(f"mast-lab: {exc}", file=sys.stderr)
        return EXIT_UNAVAILABLE


def _bird_socket(rundir: Path) -> Callable[[str], Path]:
    return lambda node: rundir / node / "bird.ctl"


def srms_transitions(logdir: Path, since: float = 0.0) -> list[str]:
    """SRMS's prefix transitions and what triggered them, from its log (which event source —
    BIRD, SNMP trap, netlink — saw the failure first is worth showing next to the timings)."""
    out = []
    for path in sorted(logdir.glob("srms.srms.*.log")):
        if path.stat().st_mtime < since:
            continue
        for line in path.read_text(errors="replace").splitlines():
            if "prefix.transition" in line:
                out.append("srms: " + line.split(" ", 1)[-1][:200])
    return out[-6:]


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def _clear_stale(rundir: Path) -> None:
    state = read_state(rundir)
    if state is not None and not owner_alive(state):
        removed = tear_down(rundir)
        if removed:
            print(f"removed what an aborted run left: {len(removed)} items")


def cmd_up(topology: Topology, rundir: Path, timeout: float) -> int:
    state = read_state(rundir)
    if state is not None and owner_alive(state):
        print(f"{topology.name} is already {state.status} (owner pid {state.owner_pid})")
        return EXIT_OK if state.status == "up" else EXIT_UNAVAILABLE
    _clear_stale(rundir)
    rundir.mkdir(parents=True, exist_ok=True)
    log_path = rundir / "supervisor.log"
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "mast_lab.cli", "--run-root", str(rundir.parent),
             "_supervise", str(topology.path)],
            stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            start_new_session=True,
        )  # fmt: skip
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        state = read_state(rundir)
        if state is not None and state.owner_pid == proc.pid and state.status == "up":
            print(
                f"{topology.name} is up: {len(state.namespaces)} namespaces, "
                f"{len(state.processes)} daemons (supervisor pid {proc.pid}, state {rundir})"
            )
            return EXIT_OK  # fmt: skip
        if proc.poll() is not None:
            print(f"mast-lab up failed; supervisor log {log_path}:", file=sys.stderr)
            print(log_path.read_text(errors="replace")[-3000:], file=sys.stderr)
            tear_down(rundir)
            return EXIT_UNAVAILABLE
        time.sleep(0.2)
    print(f"mast-lab up: not up within {timeout:.0f} s; tearing down", file=sys.stderr)
    tear_down(rundir)
    return EXIT_UNAVAILABLE


def cmd_supervise(topology: Topology, rundir: Path) -> int:
    from mast_lab.session import owned_lab

    # A handler, not a blocked signal mask: the mask would be inherited by every daemon started
    # here, and they would ignore SIGTERM.
    signal.signal(signal.SIGTERM, _interrupt)
    try:
        with owned_lab(topology, rundir, parts_mod.detect()) as real:
            for note in real.notes:
                print(note, flush=True)
            while True:
                time.sleep(3600)
    except KeyboardInterrupt:
        pass
    return EXIT_OK


def cmd_down(topology: Topology, rundir: Path) -> int:
    if read_state(rundir) is None:
        print(f"{topology.name} is not up (no {rundir / 'state.json'})")
        return EXIT_OK
    done = tear_down(rundir)
    print(f"{topology.name} is down")
    for item in done:
        print(f"  {item}")
    return EXIT_OK


def cmd_status(topology: Topology, rundir: Path) -> int:
    state = read_state(rundir)
    if state is None:
        print(f"{topology.name}: down")
        return EXIT_UNAVAILABLE
    alive = owner_alive(state)
    existing = set(list_namespaces())
    live = {r.pid for r in live_processes(state)}
    print(f"{topology.name}: {state.status}, owner pid {state.owner_pid} "
          f"({'running' if alive else 'GONE: run mast-lab down'})")  # fmt: skip
    if state.error:
        print(f"  error: {state.error}")
    for node, ns in state.namespaces.items():
        procs = [
            f"{r.label}({r.pid}{'' if r.pid in live else ' DEAD'})"
            for r in state.processes
            if r.node == node
        ]
        present = "ok" if ns in existing else "MISSING"
        print(f"  {node:8} {ns:24} {present:8} {' '.join(procs)}")
    for node, ns in state.namespaces.items():
        if ns in existing and any(r.node == node and r.label == "bird" for r in state.processes):
            out = subprocess.run(
                ["ip", "netns", "exec", ns, "birdc", "-s", str(rundir / node / "bird.ctl"),
                 "show", "protocols"],
                capture_output=True, text=True, timeout=10, check=False,
            ).stdout  # fmt: skip
            sessions = [ln.split() for ln in out.splitlines() if " BGP " in ln]
            print(f"  bgp {node}: " + ", ".join(f"{s[0]}={s[5] if len(s) > 5 else s[3]}"
                                                for s in sessions))  # fmt: skip
    complete = (
        alive and len(live) == len(state.processes) and set(state.namespaces.values()) <= existing
    )
    return EXIT_OK if state.status == "up" and complete else EXIT_FAILURE


def cmd_failover(topology: Topology, rundir: Path, output: Path | None, strict: bool) -> int:
    from mast_lab.report import summary_text, write_report
    from mast_lab.scenario import ScenarioError, load_scenario, run_failover
    from mast_lab.session import attached_nodes, owned_lab

    config = load_scenario(topology.path)
    outdir = output or OUTPUT_ROOT / topology.name
    parts = parts_mod.detect()
    print(f"mast-lab failover {topology.path}")
    for part in parts.all():
        print(f"  part {part.describe()}")
    state = read_state(rundir)
    try:
        if state is not None and owner_alive(state) and state.status == "up":
            print(f"using the running lab (owner pid {state.owner_pid})")
            attached = attached_nodes(rundir)
            if attached is None:
                print("mast-lab: the running lab is not up", file=sys.stderr)
                return EXIT_UNAVAILABLE
            scratch, nodes = attached
            try:
                result = run_failover(
                    topology, nodes, parts, config, outdir, bird_socket=_bird_socket(rundir)
                )
            finally:
                scratch.close()
            result.notes.extend(srms_transitions(rundir / "logs", since=result.started_unix))
        else:
            _clear_stale(rundir)
            t0 = time.monotonic()
            print(f"bringing {topology.name} up in network namespaces for this run")
            with owned_lab(topology, rundir, parts) as real:
                print(f"  up in {time.monotonic() - t0:.1f} s: {len(real.nodes)} nodes, "
                      f"{len(real.daemons)} daemons")  # fmt: skip
                result = run_failover(
                    topology, real.nodes, parts, config, outdir, bird_socket=_bird_socket(rundir)
                )
                result.notes.extend(real.notes)
                result.notes.extend(srms_transitions(rundir / "logs"))
            print(f"torn down; {time.monotonic() - t0:.1f} s in all")
    except ScenarioError as exc:
        print(f"mast-lab failover: {exc}", file=sys.stderr)
        return EXIT_FAILURE
    paths = write_report(result, outdir)
    print(summary_text(result))
    print(f"report: {paths['html']} (JSON {paths['json']})")
    if result.failed:
        return EXIT_FAILURE
    if strict and any(c.status == "skipped" for c in result.checks):
        print("--strict: skipped measurements count as failures", file=sys.stderr)
        return EXIT_FAILURE
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
