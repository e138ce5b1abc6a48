from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from mast_common.daemons._base import ensure_running, require_binary
from mast_common.netns import Node, Process
from mast_common.waiting import wait_for


@dataclass
class Knot:
    node: Node
    process: Process
    config: Path
    socket: Path

    def knotc(self, *command: str, timeout: float = 10) -> str:
        return self.node.exec(
            ["knotc", "-c", str(self.config), "-s", str(self.socket), *command], timeout=timeout
        ).stdout


def start_knot(
    node: Node,
    *,
    listen: list[str],
    zones: dict[str, str],
    extra_config: str = "",
    zone_options: str = "",
    timeout: float = 15,
) -> Knot:
    """Start knotd in `node` serving `zones` (origin -> zone file text) on `listen` addresses.

    `extra_config` is inserted before the zone section (keys, acls, modules); `zone_options` is
    added to every zone entry (indented YAML, e.g. '    acl: update\\n').
    """
    require_binary("knotd", "knot")
    workdir = node.lab.workdir / f"{node.name}.knot"
    workdir.mkdir(exist_ok=True)
    sock = workdir / "knot.sock"
    config = workdir / "knot.conf"
    listen_yaml = "".join(f"    listen: {addr}\n" for addr in listen)
    zone_yaml = ""
    for origin, text in zones.items():
        zfile = workdir / f"{origin.rstrip('.')}.zone"
        zfile.write_text(text)
        zone_yaml += f"  - domain: {origin}\n    file: {zfile}\n{zone_options}"
    config.write_text(
        "server:\n"
        f"    rundir: {workdir}\n"
        f"{listen_yaml}"
        "log:\n  - target: stderr\n    any: info\n"
        "database:\n"
        f"    storage: {workdir}\n"
        f"control:\n    listen: {sock}\n"
        f"{extra_config}\n"
        "zone:\n"
        f"{zone_yaml}"
    )
    node.exec(["knotc", "-c", str(config), "conf-check"])
    proc = node.spawn(["knotd", "-c", str(config)], label="knotd")
    knot = Knot(node, proc, config, sock)

    def up() -> bool:
        ensure_running(proc, "knotd")
        knot.knotc("status", timeout=3)
        return True

    wait_for(up, timeout=timeout, what=f"knotd control socket on {node.name}")
    return knot
