"""Realise a containerlab topology in network namespaces: one namespace per node, a veth pair per
link, a Linux bridge for `bridge` nodes, each node's `exec` commands, then its daemons.

Paths work as they would in the node's container: `/etc/mast/...` resolves through the node's
binds to labs/configs/<node>/, and `/run/mast/...` to the lab's run directory, which every node
shares (as a host folder bound into every container would): `/run/mast/<node>/` holds a node's
sockets, leases and journals, and SRMS reaches Kea's and BIRD's control sockets there.
"""

from __future__ import annotations

import contextlib
import json
import re
import shlex
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from mast_common.daemons._base import ensure_running, require_binary
from mast_common.daemons.kea import kea_command
from mast_common.log import get_logger
from mast_common.netns import Lab, NetnsError, Node, Process
from mast_common.waiting import WaitTimeout, wait_for
from mast_lab.parts import Parts
from mast_lab.topology import NodeSpec, Topology, TopologyError

log = get_logger(__name__)
RUN_PREFIX = "/run/mast"


class RealiseError(NetnsError):
    """A node could not be brought up; the message names the node and what failed."""


@dataclass
class Daemon:
    node: str
    name: str
    process: Process
    control: str = ""  # control socket, when the daemon has one


@dataclass
class RealisedLab:
    topology: Topology
    lab: Lab
    rundir: Path
    nodes: dict[str, Node]
    daemons: list[Daemon] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def daemon(self, node: str, name: str) -> Daemon | None:
        for d in self.daemons:
            if d.node == node and d.name == name:
                return d
        return None

    def birdc(self, node: str, *command: str, timeout: float = 10) -> str:
        return (
            self.nodes[node]
            .exec(["birdc", "-s", str(self.rundir / node / "bird.ctl"), *command], timeout=timeout)
            .stdout
        )


def node_rundir(rundir: Path, node: str) -> Path:
    path = rundir / node
    path.mkdir(parents=True, exist_ok=True)
    return path


def render(spec: NodeSpec, text: str, rundir: Path) -> str:
    """A config file's text with the container's paths replaced by this lab's host paths."""
    node_rundir(rundir, spec.name)
    text = re.sub(re.escape(RUN_PREFIX) + r"(?![\w-])", lambda _: str(rundir), text)
    for bind in spec.binds:
        text = text.replace(bind.container.rstrip("/") + "/", str(bind.host) + "/")
    return text


def config_file(spec: NodeSpec, container_path: str) -> Path:
    path = Path(spec.host_path(container_path))
    if not path.is_file():
        raise RealiseError(f"{spec.name}: {container_path} ({path}) is missing")
    return path


def realise(topology: Topology, lab: Lab, rundir: Path, parts: Parts) -> RealisedLab:
    """Build every namespace, link and daemon of `topology` inside `lab`."""
    for spec in topology.nodes.values():
        if spec.kind not in ("linux", "bridge", "ovs-bridge"):
            raise TopologyError(
                f"{topology.path}: {spec.name}: kind {spec.kind} needs containerlab "
                "(mast-lab realises linux and bridge nodes in namespaces)"
            )
        for daemon in spec.daemons:
            if daemon not in STARTERS:
                raise TopologyError(
                    f"{topology.path}: {spec.name}: MAST_DAEMONS: unknown daemon {daemon!r} "
                    f"(known: {', '.join(sorted(STARTERS))})"
                )
    rundir.mkdir(parents=True, exist_ok=True)
    for name in topology.nodes:
        # BIRD configs include the ITMP router agent's folder: it must exist (maybe empty).
        (node_rundir(rundir, name) / "itmp.d").mkdir(exist_ok=True)
    nodes = {name: lab.node(name) for name in topology.nodes}
    real = RealisedLab(topology, lab, rundir, nodes)
    for name, spec in topology.nodes.items():
        if spec.kind != "linux":
            nodes[name].ip("link", "add", name, "type", "bridge")
            nodes[name].ip("link", "set", name, "up")
    for link in topology.links:
        lab.link(link.a.node, link.a.interface, link.b.node, link.b.interface)
        for ep in (link.a, link.b):
            if topology.nodes[ep.node].kind != "linux":
                nodes[ep.node].ip("link", "set", ep.interface, "master", ep.node)
    for name, spec in topology.nodes.items():
        for command in spec.exec:
            args = [spec.host_path(word) for word in shlex.split(command)]
            proc = nodes[name].exec(args, check=False, timeout=30)
            if proc.returncode != 0:
                raise RealiseError(
                    f"{name}: exec {command!r} failed ({proc.returncode}): "
                    f"{(proc.stderr or proc.stdout).strip()}"
                )
    uses_itmp = any(d.startswith("itmp-") for sp in topology.nodes.values() for d in sp.daemons)
    if uses_itmp and parts.itmp.present:
        issue_lab_pki(topology, rundir)
    # Servers first, SRMS last: it pushes every prefix status to them when it starts.
    for phase in PHASES:
        for spec in topology.nodes.values():
            for daemon in spec.daemons:
                if daemon in phase:
                    STARTERS[daemon](real, spec, parts)
    log.info("lab.up", lab=topology.name, nodes=len(nodes), daemons=len(real.daemons))
    return real


def _start_bird(real: RealisedLab, spec: NodeSpec, parts: Parts) -> None:
    require_binary("bird", "bird2")
    run = node_rundir(real.rundir, spec.name)
    conf = run / "bird.conf"
    conf.write_text(render(spec, config_file(spec, "/etc/mast/bird.conf").read_text(), real.rundir))
    ctl = run / "bird.ctl"
    node = real.nodes[spec.name]
    proc = node.spawn(["bird", "-f", "-c", str(conf), "-s", str(ctl)], label="bird")

    def up() -> bool:
        ensure_running(proc, f"bird on {spec.name}")
        return "Daemon is up" in real.birdc(spec.name, "show", "status", timeout=3)

    wait_for(up, timeout=20, what=f"bird on {spec.name}")
    real.daemons.append(Daemon(spec.name, "bird", proc, str(ctl)))


def _start_snmpd(real: RealisedLab, spec: NodeSpec, parts: Parts) -> None:
    require_binary("snmpd", "snmpd")
    # snmpd reads every file under its MIB directory: give it a folder of its own.
    run = node_rundir(real.rundir, spec.name) / "snmp"
    run.mkdir(exist_ok=True)
    conf = run / "snmpd.conf"
    conf.write_text(
        render(spec, config_file(spec, "/etc/mast/snmpd.conf").read_text(), real.rundir)
    )
    node = real.nodes[spec.name]
    env = {"SNMP_PERSISTENT_DIR": str(run), "MIBS": "", "MIBDIRS": str(run)}
    # -C: only our configuration file; -f: foreground; -Lo: log to stdout.
    args = ["snmpd", "-f", "-C", "-c", str(conf), "-Lo", "-p", str(run / "snmpd.pid")]
    proc = node.spawn([*args, "-M", str(run)], label="snmpd", env=env)
    sys_descr = ".1.3.6.1.2.1.1.1.0"

    def up() -> bool:
        ensure_running(proc, f"snmpd on {spec.name}")
        get = ["snmpget", "-v2c", "-c", "public", "-On", "-t", "1", "-r", "0"]
        out = node.exec([*get, "udp:127.0.0.1:161", sys_descr], timeout=4, check=False)
        return sys_descr in out.stdout

    wait_for(up, timeout=20, what=f"snmpd on {spec.name}", interval=0.2)
    real.daemons.append(Daemon(spec.name, "snmpd", proc, "udp:127.0.0.1:161"))


def _start_kea(real: RealisedLab, spec: NodeSpec, parts: Parts) -> None:
    require_binary("kea-dhcp6", "kea-dhcp6-server")
    run = node_rundir(real.rundir, spec.name)
    text = render(spec, config_file(spec, "/etc/mast/kea-dhcp6.json").read_text(), real.rundir)
    try:
        config = json.loads(text)
    except ValueError as exc:
        raise RealiseError(f"{spec.name}: kea-dhcp6.json: {exc}") from None
    hook = parts.kea_hook
    if hook.present and hook.path:
        params_text = render(
            spec, config_file(spec, "/etc/mast/mast-hook.json").read_text(), real.rundir
        )
        try:
            params = json.loads(params_text)
        except ValueError as exc:
            raise RealiseError(f"{spec.name}: mast-hook.json: {exc}") from None
        config["Dhcp6"].setdefault("hooks-libraries", []).append(
            {"library": hook.path, "parameters": params}
        )
    conf = run / "kea-dhcp6.json"
    conf.write_text(json.dumps(config, indent=2))
    sock = config["Dhcp6"]["control-socket"]["socket-name"]
    env = {
        "KEA_PIDFILE_DIR": str(run),
        "KEA_LOCKFILE_DIR": str(run),
        "KEA_LOGGER_DESTINATION": "stdout",
    }
    node = real.nodes[spec.name]
    proc = node.spawn(["kea-dhcp6", "-c", str(conf)], label="kea-dhcp6", env=env)

    def up() -> bool:
        ensure_running(proc, f"kea-dhcp6 on {spec.name}")
        return kea_command(sock, "version-get").get("result") == 0

    wait_for(up, timeout=30, what=f"kea-dhcp6 on {spec.name}")
    real.daemons.append(Daemon(spec.name, "kea", proc, sock))


def _start_knot(real: RealisedLab, spec: NodeSpec, parts: Parts) -> None:
    require_binary("knotd", "knot")
    run = node_rundir(real.rundir, spec.name)
    text = render(spec, config_file(spec, "/etc/mast/knot.conf").read_text(), real.rundir)
    module = parts.knot_module
    if module.present and module.path:
        text = with_mast_module(text, module.path)
    conf = run / "knot.conf"
    conf.write_text(text)
    node = real.nodes[spec.name]
    check = node.exec(["knotc", "-c", str(conf), "conf-check"], check=False)
    if check.returncode != 0:
        raise RealiseError(f"{spec.name}: knot.conf: {(check.stderr or check.stdout).strip()}")
    proc = node.spawn(["knotd", "-c", str(conf)], label="knotd")
    sock = str(run / "knot.sock")

    def up() -> bool:
        ensure_running(proc, f"knotd on {spec.name}")
        node.exec(["knotc", "-c", str(conf), "-s", sock, "status"], timeout=3)
        return True

    wait_for(up, timeout=20, what=f"knotd on {spec.name}")
    real.daemons.append(Daemon(spec.name, "knot", proc, sock))


def with_mast_module(knot_conf: str, module: str) -> str:
    """knot.conf with the MAST module loaded for every zone, each zone reading the module's form
    of its zone file (`<zone>.mast.zone`: APL status record and host IFID map)."""
    sections = (
        f"module:\n  - id: mod-mast\n    file: {module}\nmod-mast:\n  - id: default\n    ttl: 30\n"
    )
    text = knot_conf.replace("\nzone:\n", "\n" + sections + "zone:\n", 1)
    text = re.sub(
        r"(\n    file: )(\S+)\.zone\n", r"\1\2.mast.zone\n    module: mod-mast/default\n", text
    )
    return text


def issue_lab_pki(topology: Topology, rundir: Path) -> None:
    """A lab CA and the ITMP certificates its nodes' configs name: `tms.<node>.lab` (server,
    also valid for the TMS's tunnel endpoint address) and `stub.<node>.lab` (client)."""
    from itmp.pki import LabCa

    ca = LabCa.create(rundir / "pki", name="mast-lab-ca")
    for spec in topology.nodes.values():
        if "itmp-tms" in spec.daemons:
            conf = config_file(spec, "/etc/mast/itmp-tms.toml").read_text()
            endpoint = re.search(r'^endpoint = "([^"]+)"', conf, re.M)
            names = [f"tms.{spec.name}.lab"] + ([endpoint.group(1)] if endpoint else [])
            ca.issue(f"tms.{spec.name}.lab", server_names=names)
        if "itmp-stub" in spec.daemons:
            ca.issue(f"stub.{spec.name}.lab")


def _start_itmp(real: RealisedLab, spec: NodeSpec, parts: Parts, role: str) -> None:
    if not parts.itmp.present:
        real.notes.append(f"{spec.name}: itmp {role} not started: {parts.itmp.reason}")
        return
    run = node_rundir(real.rundir, spec.name)
    name = {"router-agent": "itmp-agent", "tms": "itmp-tms", "stub": "itmp-stub"}[role]
    conf = run / f"{name}.toml"
    conf.write_text(
        render(spec, config_file(spec, f"/etc/mast/{name}.toml").read_text(), real.rundir)
    )
    node = real.nodes[spec.name]
    args = [sys.executable, "-m", "itmp", role, "-c", str(conf), "--log-format", "logfmt"]
    proc = node.spawn(args, label=name)
    marker = {"router-agent": "router_agent.ready", "tms": "tms.ready", "stub": ""}[role]

    def up() -> bool:
        ensure_running(proc, f"itmp {role} on {spec.name}")
        return marker in proc.log()

    wait_for(up, timeout=30 if marker else 1, what=f"itmp {role} on {spec.name}", interval=0.1)
    real.daemons.append(Daemon(spec.name, name, proc))


def _start_srms(real: RealisedLab, spec: NodeSpec, parts: Parts) -> None:
    srms = parts.srms.path
    if not parts.srms.present or srms is None:
        real.notes.append(f"{spec.name}: srms not started: {parts.srms.reason}")
        return
    run = node_rundir(real.rundir, spec.name)
    conf = run / "srms.toml"
    conf.write_text(render(spec, config_file(spec, "/etc/mast/srms.toml").read_text(), real.rundir))
    node = real.nodes[spec.name]
    proc = node.spawn([srms, "-c", str(conf), "run"], label="srms")
    sock = run / "control.sock"

    def up() -> bool:
        ensure_running(proc, f"srms on {spec.name}")
        status = node.exec([srms, "-c", str(conf), "status"], check=False, timeout=5)
        return status.returncode == 0

    wait_for(up, timeout=30, what=f"srms on {spec.name}", interval=0.2)
    real.daemons.append(Daemon(spec.name, "srms", proc, str(sock)))


def _start_mast_client(real: RealisedLab, spec: NodeSpec, parts: Parts) -> None:
    client = parts.mast_client
    if not client.present or not client.path:
        real.notes.append(f"{spec.name}: mast-client not started: {client.reason}")
        return
    run = node_rundir(real.rundir, spec.name)
    args = [client.path, "run", "-i", spec.env.get("MAST_CLIENT_INTERFACE", "eth1")]
    if spec.env.get("MAST_PUSH_KEY"):
        args += ["--key", spec.env["MAST_PUSH_KEY"]]
    stats = run / "mast-client.json"
    proc = real.nodes[spec.name].spawn([*args, "--stats-file", str(stats)], label="mast-client")

    def up() -> bool:
        ensure_running(proc, f"mast-client on {spec.name}")
        return stats.exists()

    # It may write its stats only on a first event: running after a short wait is what counts.
    with contextlib.suppress(WaitTimeout):
        wait_for(up, timeout=2, what=f"mast-client on {spec.name}", interval=0.1)
    ensure_running(proc, f"mast-client on {spec.name}")
    real.daemons.append(Daemon(spec.name, "mast-client", proc, str(stats)))


PHASES = (
    {"bird", "snmpd", "kea", "knot"},
    {"mast-client", "itmp-agent"},
    {"itmp-tms"},
    {"itmp-stub"},
    {"srms"},
)
STARTERS: dict[str, Callable[[RealisedLab, NodeSpec, Parts], None]] = {
    "bird": _start_bird,
    "snmpd": _start_snmpd,
    "kea": _start_kea,
    "knot": _start_knot,
    "srms": _start_srms,
    "mast-client": _start_mast_client,
    "itmp-agent": lambda real, spec, parts: _start_itmp(real, spec, parts, "router-agent"),
    "itmp-tms": lambda real, spec, parts: _start_itmp(real, spec, parts, "tms"),
    "itmp-stub": lambda real, spec, parts: _start_itmp(real, spec, parts, "stub"),
}
