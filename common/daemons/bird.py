from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from mast_common.daemons._base import ensure_running, require_binary
from mast_common.netns import Node, Process
from mast_common.waiting import wait_for


@dataclass
class Bird:
    node: Node
    process: Process
    config: Path
    socket: Path

    def birdc(self, *command: str, timeout: float = 10) -> str:
        return self.node.exec(["birdc", "-s", str(self.socket), *command], timeout=timeout).stdout

    def configure(self) -> str:
        out = self.birdc("configure")
        if "Reconfigured" not in out and "Reconfiguration in progress" not in out:
            raise RuntimeError(f"birdc configure failed: {out.strip()}")
        return out


def start_bird(node: Node, *, router_id: str, body: str = "", timeout: float = 15) -> Bird:
    """Start BIRD 2 in `node`; `body` is appended after the device protocol."""
    require_binary("bird", "bird2")
    workdir = node.lab.workdir
    config = workdir / f"{node.name}.bird.conf"
    socket = workdir / f"{node.name}.bird.ctl"
    config.write_text(
        f"router id {router_id};\nlog stderr all;\nprotocol device {{ scan time 1; }}\n{body}\n"
    )
    proc = node.spawn(["bird", "-f", "-c", str(config), "-s", str(socket)], label="bird")
    bird = Bird(node, proc, config, socket)

    def up() -> bool:
        ensure_running(proc, "bird")
        return "Daemon is up and running" in bird.birdc("show", "status", timeout=3)

    wait_for(up, timeout=timeout, what=f"bird on {node.name}")
    return bird
