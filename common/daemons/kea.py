from __future__ import annotations

import json
import socket
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mast_common.daemons._base import ensure_running, require_binary
from mast_common.netns import Node, Process
from mast_common.waiting import wait_for


class KeaCommandError(RuntimeError):
    pass


def kea_command(
    socket_path: Path | str,
    command: str,
    arguments: dict[str, Any] | None = None,
    *,
    timeout: float = 5,
) -> dict[str, Any]:
    """Send one command over Kea's unix control socket and return its answer."""
    request: dict[str, Any] = {"command": command}
    if arguments is not None:
        request["arguments"] = arguments
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(timeout)
        sock.connect(str(socket_path))
        sock.sendall(json.dumps(request).encode())
        chunks = []
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                break
            chunks.append(chunk)
            try:
                answer = json.loads(b"".join(chunks))
            except ValueError:
                continue
            if isinstance(answer, dict):
                return answer
            raise KeaCommandError(f"unexpected answer to {command}: {answer!r}")
    raise KeaCommandError(f"no answer to {command} from {socket_path}")


@dataclass
class KeaDhcp6:
    node: Node
    process: Process
    config: Path
    socket: Path
    leases: Path

    def command(self, command: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
        return kea_command(self.socket, command, arguments)


def start_kea_dhcp6(
    node: Node,
    *,
    interfaces: list[str],
    subnets: list[dict[str, Any]] | None = None,
    hooks: list[dict[str, Any]] | None = None,
    extra: dict[str, Any] | None = None,
    timeout: float = 20,
    launcher: Sequence[str] = (),
) -> KeaDhcp6:
    """Start kea-dhcp6 in `node` with a memfile lease DB and a unix control socket.

    `launcher` prefixes the command line (e.g. valgrind for a benchmark that counts instructions).
    """
    require_binary("kea-dhcp6", "kea-dhcp6-server")
    workdir = node.lab.workdir
    config = workdir / f"{node.name}.kea-dhcp6.json"
    sock = workdir / f"{node.name}.kea6.sock"
    leases = workdir / f"{node.name}.kea-leases6.csv"
    dhcp6: dict[str, Any] = {
        "interfaces-config": {"interfaces": interfaces},
        "control-socket": {"socket-type": "unix", "socket-name": str(sock)},
        "lease-database": {
            "type": "memfile",
            "persist": True,
            "name": str(leases),
            "lfc-interval": 0,
        },
        # Kea writes its DUID under /var/lib/kea by default; keep each instance's in its lab.
        "server-id": {"type": "LLT", "persist": True},
        "data-directory": str(workdir),
        "subnet6": subnets or [],
        "hooks-libraries": hooks or [],
        "loggers": [
            {"name": "kea-dhcp6", "severity": "INFO", "output_options": [{"output": "stdout"}]}
        ],
    }
    dhcp6.update(extra or {})
    config.write_text(json.dumps({"Dhcp6": dhcp6}, indent=2))
    # Kea keeps a pid file and a lock file; one per instance so labs can run several.
    env = {
        "KEA_PIDFILE_DIR": str(workdir),
        "KEA_LOCKFILE_DIR": str(workdir),
        "KEA_LOGGER_DESTINATION": "stdout",
    }
    proc = node.spawn([*launcher, "kea-dhcp6", "-c", str(config)], label="kea-dhcp6", env=env)
    kea = KeaDhcp6(node, proc, config, sock, leases)

    def up() -> bool:
        ensure_running(proc, "kea-dhcp6")
        return kea.command("version-get").get("result") == 0

    wait_for(up, timeout=timeout, what=f"kea-dhcp6 control socket on {node.name}")
    return kea
