from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from mast_common.daemons._base import ensure_running, require_binary
from mast_common.netns import Node, Process
from mast_common.waiting import wait_for

SYS_DESCR = ".1.3.6.1.2.1.1.1.0"


@dataclass
class Snmpd:
    node: Node
    process: Process
    config: Path
    agent: str  # transport address, e.g. udp:127.0.0.1:161
    community: str

    def get(self, oid: str, timeout: float = 5) -> str:
        """SNMPv2c GET (numeric OIDs: Debian's snmpd ships without MIB files)."""
        return self.node.exec(
            ["snmpget", "-v2c", "-c", self.community, "-On", "-t", "1", "-r", "1", self.agent, oid],
            timeout=timeout,
        ).stdout


def start_snmpd(
    node: Node,
    *,
    agent: str = "udp:127.0.0.1:161",
    community: str = "public",
    extra_config: str = "",
    timeout: float = 15,
) -> Snmpd:
    """Start net-snmp's snmpd in `node` in the foreground, with only our configuration."""
    require_binary("snmpd", "snmpd")
    require_binary("snmpget", "snmp")
    workdir = node.lab.workdir / f"{node.name}.snmp"
    workdir.mkdir(exist_ok=True)
    config = workdir / "snmpd.conf"
    config.write_text(
        f"rocommunity {community} default\nsysDescr MAST test router {node.name}\n{extra_config}\n"
    )
    env = {"SNMP_PERSISTENT_DIR": str(workdir), "MIBS": "", "MIBDIRS": str(workdir)}
    # -C: ignore system config files; -f: stay in the foreground; -Lo: log to stdout.
    proc = node.spawn(
        [
            "snmpd",
            "-f",
            "-C",
            "-c",
            str(config),
            "-Lo",
            "-p",
            str(workdir / "snmpd.pid"),
            "-M",
            str(workdir),
            agent,
        ],
        label="snmpd",
        env=env,
    )
    snmpd = Snmpd(node, proc, config, agent, community)

    def up() -> bool:
        ensure_running(proc, "snmpd")
        return SYS_DESCR in snmpd.get(SYS_DESCR, timeout=4)

    wait_for(up, timeout=timeout, what=f"snmpd on {node.name}", interval=0.2)
    return snmpd
